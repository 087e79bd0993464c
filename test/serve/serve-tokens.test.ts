/**
 * `steward serve` with named tokens, over real HTTP on 127.0.0.1: `by` is the token's name
 * (verified), a token may not claim another name unless it may act for others (then the
 * journal keeps the claimed name and the token as `via`); reserved names are a 400 in any mode.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { tokensFromEnv } from '../../src/http/tokens.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { useTempDir } from '../support/temp.js';
import { client } from './http.js';

const ALICE = 'alice-0123456789abcdef';
const DESK = 'desk-0123456789abcdef0';
const tmp = useTempDir('steward-serve-tokens-');
const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(tokens: ReturnType<typeof tokensFromEnv>) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({
    runtime,
    store,
    port: 0,
    log: () => {},
    ...(tokens.kind === 'named' ? { tokens: tokens.tokens } : tokens.kind === 'shared' ? { token: tokens.token } : {}),
  });
  open.push(server);
  const byOf = async (id: string) =>
    (await store.journal(id))
      .filter((e) => e.kind === 'event')
      .map((e) => {
        const p = e.payload as { by?: string; via?: string; refused?: unknown };
        return [e.type, p.by, p.via, p.refused ? 'refused' : 'ok'];
      });
  return { server, store, byOf };
}

it("records the token's name as `by`, refuses another name (403, nothing journalled), lets an act-for-others token name who acted", async () => {
  const file = tmp.path('tokens');
  writeFileSync(file, `# who may call\n\nalice ${ALICE}\n  front-desk\t${DESK}  act-for-others\n`);
  const { server, byOf } = await serve(tokensFromEnv({ STEWARD_TOKENS_FILE: file }));
  const alice = client(server.url, ALICE);
  const desk = client(server.url, DESK);

  const wrong = await client(server.url, 'not-a-token-0123456789').post('/sessions', { packageId: 'tiny' });
  expect(wrong.status).toBe(401);
  expect(wrong.body.error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('STEWARD_TOKENS') });
  expect((await client(server.url).get('/sessions')).status).toBe(401);

  const id: string = (await alice.post('/sessions', { packageId: 'tiny' })).body.view.id;
  // Another name, in the body or in the header: refused before the session sees it.
  const claimed = await alice.post(`/sessions/${id}/events`, { type: 'user_submitted_input', by: 'bob', text: 'Green tea.' });
  expect(claimed.status).toBe(403);
  expect(claimed.body.error.code).toBe('by_not_allowed');
  expect(claimed.body.error.message).toContain('This is the token of "alice": the events it sends are by "alice", not "bob"');
  expect(claimed.body.error.message).toContain('act-for-others');
  expect((await alice.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' }, { 'x-steward-user': 'bob' })).status).toBe(403);
  // The server sets `via`, never the client.
  expect((await desk.post(`/sessions/${id}/events`, { type: 'user_submitted_input', via: 'alice', text: 'Green tea.' })).status).toBe(400);
  expect(await byOf(id)).toEqual([]);

  // No `by`: the token's name; its own name: the same.
  expect((await alice.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' })).status).toBe(200);
  const approved = await alice.post(`/sessions/${id}/events`, { type: 'user_approved_next_step', by: 'alice', edits: { reason: 'One line.' } });
  expect(approved.status).toBe(200);
  expect(approved.body.view.pendingStep.proposed).toMatchObject({ by: 'alice' });
  // A front end that acts for its users: the claimed name, and which token sent it.
  const accepted = await desk.post(`/sessions/${id}/events`, {
    type: 'user_accepted_artifact',
    by: 'erin',
    artifactId: approved.body.view.artifact.id,
    edits: { note: 'Green tea, by Erin.' },
  });
  expect(accepted.status).toBe(200);
  expect(accepted.body.view.blackboard.find((b: { tag: string }) => b.tag === 'note')).toMatchObject({ version: 2, writtenBy: 'erin' });
  expect(await byOf(id)).toEqual([
    ['user_submitted_input', 'alice', undefined, 'ok'],
    ['user_approved_next_step', 'alice', undefined, 'ok'],
    ['user_accepted_artifact', 'erin', 'front-desk', 'ok'],
  ]);
});

it('takes STEWARD_TOKENS (entries split by ; too); a token named like a worker is refused at start, naming it', async () => {
  const { server } = await serve(tokensFromEnv({ STEWARD_TOKENS: `alice ${ALICE}; desk ${DESK}` }));
  expect((await client(server.url, DESK).post('/sessions', { packageId: 'tiny' })).status).toBe(201);
  // Every event such a token sent would be refused as by the worker: said once, at start.
  await expect(serve(tokensFromEnv({ STEWARD_TOKENS: `alice ${ALICE}; Echo ${DESK}` }))).rejects.toThrow(
    /Token names "Echo" \(the worker tiny\/echo\) are worker ids.*Rename the tokens/,
  );
});

it('refuses reserved names as `by` without tokens and with the shared token (400)', async () => {
  for (const tokens of [{ kind: 'none' } as const, { kind: 'shared', token: ALICE } as const]) {
    const { server, byOf } = await serve(tokens);
    const http = client(server.url, tokens.kind === 'shared' ? tokens.token : undefined);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const steward = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', by: 'steward', text: 'Green tea.' });
    expect(steward.status).toBe(400);
    expect(steward.body.error.message).toContain('by: "steward" is a reserved name');
    // The session refused it: a SendResult, as the OpenAPI document declares for this 400.
    expect(steward.body).toMatchObject({ ok: false, error: { code: 'invalid_event' }, view: { id } });
    expect((await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' }, { 'x-steward-user': 'System' })).status).toBe(400);
    // Without named tokens `by` stays a claim: any other name is recorded as given.
    expect((await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', by: 'bob', text: 'Green tea.' })).status).toBe(200);
    expect((await byOf(id)).map(([type, by, , outcome]) => [type, by, outcome])).toEqual([
      ['user_submitted_input', undefined, 'refused'],
      ['user_submitted_input', undefined, 'refused'],
      ['user_submitted_input', 'bob', 'ok'],
    ]);
  }
});
