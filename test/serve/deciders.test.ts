/**
 * Who decides a wait whose worker names its deciders (front matter `approvers`), over real
 * HTTP on 127.0.0.1: `steward serve` stamps each event's `groups` from the caller's token —
 * `admin` for a caller who sees every session — and refuses `groups` in a body; a decision by
 * a token outside the group is a 403 not_a_decider and the session still waits; a decision
 * link decides as the groups its maker named for it, and only a member (or admin) names them.
 */
import { afterEach, beforeAll, expect, it } from 'vitest';
import type { NamedToken } from '../../src/http/tokens.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { useTempDir } from '../support/temp.js';
import { tinyDecidedBy } from '../support/decided-package.js';
import { agUiAgent, runError } from '../protocols/ag-ui-client.js';
import { a2aClient, request } from '../protocols/a2a-client.js';
import { client } from './http.js';

const temp = useTempDir('steward-deciders-');
const SECRET = 'd'.repeat(24) + '0123456789abcdef0123456789abcdef';
const TOKENS: NamedToken[] = [
  { name: 'alice', token: 'alice-token-0123456789abcdef', actForOthers: false },
  { name: 'bob', token: 'bob-token-0123456789abcdef', actForOthers: false, groups: ['dev'] },
  { name: 'olga', token: 'olga-token-0123456789abcdef', actForOthers: false, groups: ['ops'] },
  { name: 'root', token: 'root-token-0123456789abcdef', actForOthers: false, groups: ['admin'] },
];
const tokenOf = (name: string) => TOKENS.find((t) => t.name === name)!.token;

let packagesDir = '';
beforeAll(() => {
  // The tiny package, its first worker's steps approved by the ops group only.
  packagesDir = tinyDecidedBy(temp.path('packages'), 'ops');
});

const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(auth: { tokens?: NamedToken[]; token?: string }) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store, packagesDir });
  const server = await startServe({ runtime, store, port: 0, log: () => {}, linkSecret: SECRET, ...auth });
  open.push(server);
  return { server, store };
}

/** A session of alice's, which bob and the ops group may see and decide, waiting for its first step's approval. */
async function atApproval(url: string, as = client(url, tokenOf('alice'))) {
  const created = await as.post('/sessions', { packageId: 'tiny', participants: ['bob', 'group:ops'] });
  expect(created.status).toBe(201);
  const id: string = created.body.view.id;
  const sent = await as.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A short note.' });
  expect(sent.body.view.waitingReason).toBe('approve_step');
  return { id, wait: sent.body.view.wait as number };
}

it('refuses a decision by a token outside the deciders with 403 not_a_decider, journals it, and takes one from the group', async () => {
  const { server, store } = await serve({ tokens: TOKENS });
  const { id, wait } = await atApproval(server.url);
  const bob = client(server.url, tokenOf('bob'));

  const refused = await bob.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
  expect(refused.status).toBe(403);
  expect(refused.body.ok).toBe(false);
  expect(refused.body.error.code).toBe('not_a_decider');
  expect(refused.body.error.message).toContain('only the groups ops (or admin) may');
  expect(refused.body.view).toMatchObject({ waitingReason: 'approve_step', wait });
  // The journal keeps the refused event as sent (bob's groups stamped) and the chart's reason with its code.
  const entry = (await store.journal(id)).at(-1)!;
  expect(entry).toMatchObject({ type: 'user_approved_next_step', state: 'waiting_user.approve_step', payload: { by: 'bob', groups: ['dev'] } });
  expect(refused.body.view.rejections.at(-1)).toMatchObject({ type: 'user_approved_next_step', code: 'not_a_decider' });

  // alice is in no group at all: refused too.
  expect((await client(server.url, tokenOf('alice')).post(`/sessions/${id}/events`, { type: 'user_approved_next_step' })).status).toBe(403);

  const approved = await client(server.url, tokenOf('olga')).post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
  expect(approved.status).toBe(200);
  expect(approved.body.view.waitingReason).not.toBe('approve_step');
  const decided = (await store.journal(id)).filter((e) => e.type === 'user_approved_next_step').map((e) => e.payload);
  expect(decided.at(-1)).toMatchObject({ by: 'olga', groups: ['ops'], through: 'rest' });
});

it('refuses `groups` in a request body, as it refuses `via`', async () => {
  const { server } = await serve({ tokens: TOKENS });
  const { id } = await atApproval(server.url);
  const bob = client(server.url, tokenOf('bob'));
  const claimed = await bob.post(`/sessions/${id}/events`, { type: 'user_approved_next_step', groups: ['ops'] });
  expect(claimed.status).toBe(400);
  expect(claimed.body.error).toMatchObject({ code: 'invalid_request' });
  expect(claimed.body.error.message).toContain('the server sets `groups`');
  expect((await bob.get(`/sessions/${id}`)).body.view.waitingReason).toBe('approve_step');
});

it('takes the decision of an admin token', async () => {
  const { server, store } = await serve({ tokens: TOKENS });
  const { id } = await atApproval(server.url);
  const approved = await client(server.url, tokenOf('root')).post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
  expect(approved.status).toBe(200);
  expect((await store.journal(id)).find((e) => e.type === 'user_approved_next_step')?.payload).toMatchObject({ by: 'root', groups: ['admin'] });
});

it('takes the decision of the shared token, and of a server without tokens: one trusted caller decides as admin', async () => {
  for (const token of ['shared-token-0123456789abcdef', undefined]) {
    const { server, store } = await serve(token ? { token } : {});
    const http = client(server.url, token);
    const { id } = await atApproval(server.url, http);
    const approved = await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
    expect(approved.status).toBe(200);
    expect((await store.journal(id)).find((e) => e.type === 'user_approved_next_step')?.payload).toMatchObject({ groups: ['admin'] });
  }
});

it('decides through a link as the groups its maker named; a link without them is refused; only a member names a group', async () => {
  const { server, store } = await serve({ tokens: TOKENS });
  const { id, wait } = await atApproval(server.url);
  const olga = client(server.url, tokenOf('olga'));
  const bob = client(server.url, tokenOf('bob'));

  // bob may decide the session, but is not in ops: he cannot hand ops on.
  const foreign = await bob.post(`/sessions/${id}/links`, { recipient: 'bob', groups: ['ops'] });
  expect(foreign.status).toBe(403);
  expect(foreign.body.error).toMatchObject({ code: 'forbidden' });
  expect(foreign.body.error.message).toContain('not in the group "ops"');

  // A link without groups decides as nobody's group: refused by the wait's deciders.
  const plain = await olga.post(`/sessions/${id}/links`, { recipient: 'olga' });
  expect(plain.status).toBe(201);
  expect(plain.body.groups).toBeUndefined();
  const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
  const refused = await post(plain.body.url);
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('not_a_decider');

  const link = await olga.post(`/sessions/${id}/links`, { recipient: 'olga', groups: ['ops'] });
  expect(link.status).toBe(201);
  expect(link.body).toMatchObject({ wait, groups: ['ops'] });
  const decided = await post(link.body.url);
  expect(decided.status).toBe(200);
  const payload = (await store.journal(id)).filter((e) => e.type === 'user_approved_next_step').at(-1)?.payload;
  expect(payload).toMatchObject({ by: 'olga', groups: ['ops'], through: 'link', via: `link:${link.body.linkId}` });
});

it("stamps an AG-UI run's decision with the caller's groups: outside the deciders it is a RUN_ERROR not_a_decider", async () => {
  const { server, store } = await serve({ tokens: TOKENS });
  const { id } = await atApproval(server.url);
  const url = `${server.url}/ag-ui/tiny`;

  const bob = agUiAgent(url, id, tokenOf('bob'));
  await bob.run();
  const interrupt = bob.interrupt!;
  expect(interrupt).toBeDefined();
  expect(runError(await bob.resume(interrupt, { approved: true }))).toMatchObject({ code: 'not_a_decider' });
  expect((await client(server.url, tokenOf('bob')).get(`/sessions/${id}`)).body.view.waitingReason).toBe('approve_step');

  const olga = agUiAgent(url, id, tokenOf('olga'));
  await olga.run();
  const approved = await olga.resume(olga.interrupt!, { approved: true });
  expect(runError(approved)).toBeUndefined();
  const payload = (await store.journal(id)).filter((e) => e.type === 'user_approved_next_step').at(-1)?.payload;
  expect(payload).toMatchObject({ by: 'olga', groups: ['ops'], through: 'ag-ui' });
});

it("stamps an A2A message's decision with the caller's groups: outside the deciders it is refused, nothing applied", async () => {
  const { server, store } = await serve({ tokens: TOKENS });
  const { id } = await atApproval(server.url);
  const bob = await a2aClient(server.url, 'tiny', tokenOf('bob'));
  await expect(bob.sendMessage(request({ data: { approved: true } }, { taskId: id }))).rejects.toThrow(/"bob" may not decide wait/);
  expect((await client(server.url, tokenOf('bob')).get(`/sessions/${id}`)).body.view.waitingReason).toBe('approve_step');

  const olga = await a2aClient(server.url, 'tiny', tokenOf('olga'));
  await olga.sendMessage(request({ data: { approved: true } }, { taskId: id }));
  const payload = (await store.journal(id)).filter((e) => e.type === 'user_approved_next_step').at(-1)?.payload;
  expect(payload).toMatchObject({ by: 'olga', groups: ['ops'], through: 'a2a' });
});
