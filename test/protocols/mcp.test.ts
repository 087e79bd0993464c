/**
 * `/mcp` on `steward serve` (SQLite, ana's named token), driven by the MCP SDK's own client over
 * Streamable HTTP: a short-story session from one `run_short-story` call through every kind of
 * wait it has to done, each wait a form the host's person answers from its schema (a step
 * approved with an edited task, an artifact accepted with an edited body); on the 2026-07-28
 * protocol (input_required, the client fulfilling it) and on the 2025 one (elicitation/create
 * on the MCP session). By hand: a forged request state is refused, a declined form leaves the
 * session waiting and says so, a retried answer counts once, an answer given elsewhere moves
 * the call on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, scriptedCall } from '../../src/models/scripted-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { readJournal } from '../../src/runtime/journal-waits.js';
import { useTempDir } from '../support/temp.js';
import { ANA_TOKEN, serveForAna } from './protocol-server.js';
import { startServe } from '../../src/serve/server.js';
import { Client } from '@modelcontextprotocol/client';
import { callRound, httpTransport, isInputRequired, mcpClient, scriptedPerson, textOf, type Era, type FormAnswer, type ShownForm } from './mcp-client.js';

const tmp = useTempDir('steward-mcp-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const REQUEST = 'A ghost story set in a lighthouse.';
const BRIEF = '# Brief\n\nInes keeps the last light.';
const OUTLINE = '# Outline\n\n1. The log. 2. The lamp.';
const DRAFT_1 = '# The Last Light\n\nThe lamp had not failed in forty years.';
const DRAFT_2 = '# The Last Light\n\nInes had kept the lamp for forty years.';
const SUMMARY = 'The Last Light: drafted and revised.';

/** The model of a short story with every kind of wait the package has. */
const storyModel = () =>
  new ScriptedModel([
    /* 0 */ { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Who is it for?' })] },
    /* 1 */ { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'For adults, then. Shall I start?' })] },
    /* 2 */ { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'brief-writer', reason: 'Fix the decisions.', requiresApproval: true })] },
    /* 3 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { brief: BRIEF } })] },
    /* 4 */ { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'outliner', reason: 'Three scenes.', requiresApproval: true })] },
    /* 5 */ { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'outliner', reason: 'Five scenes.', requiresApproval: false })] },
    /* 6 */ { agent: 'worker', toolCalls: [scriptedCall('ask_user', { questions: ['Does Ines survive?', 'Is the ghost real?'] })] },
    /* 7 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { outline: OUTLINE } })] },
    /* 8 */ { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'drafter', reason: 'Write it.', requiresApproval: false })] },
    /* 9 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { draft: DRAFT_1 } })] },
    /* 10 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { draft: DRAFT_2 } })] },
    /* 11 */ { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: SUMMARY })] },
  ]);

/** The person's answers, in the order the waits come, each checked against the form it answers. */
const STORY_ANSWERS: Array<(form: ShownForm) => FormAnswer> = [
  (f) => {
    expect(f.message).toContain('Who is it for?');
    expect(Object.keys(f.requestedSchema.properties).sort()).toEqual(['confirm', 'text']);
    return { action: 'accept', content: { text: 'Adults, 2,000 words.' } };
  },
  (f) => {
    expect(f.message).toContain('Shall I start?');
    return { action: 'accept', content: { confirm: true, text: '' } };
  },
  (f) => {
    expect(f.message).toBe('Run brief-writer: Fix the decisions.');
    expect(f.requestedSchema.required).toEqual(['approved']);
    expect(f.requestedSchema.properties.approved).toMatchObject({ type: 'boolean' });
    return { action: 'accept', content: { approved: true, reason: 'Fix the decisions; keep it quiet.' } };
  },
  (f) => {
    expect(f.message).toContain(BRIEF);
    expect(f.requestedSchema.properties['edits.brief']).toMatchObject({ type: 'string', default: BRIEF });
    return { action: 'accept', content: { accepted: true, 'edits.brief': `${BRIEF}\n\nEdited by ana.` } };
  },
  (f) => {
    expect(f.message).toBe('Run outliner: Three scenes.');
    return { action: 'accept', content: { approved: false, reason: 'Five scenes, please.' } };
  },
  (f) => {
    expect(f.message).toContain('q1: Does Ines survive?');
    expect(Object.keys(f.requestedSchema.properties).sort()).toEqual(['answers.q1', 'answers.q2', 'skip']);
    return { action: 'accept', content: { 'answers.q1': 'No.', 'answers.q2': 'Leave it open.' } };
  },
  (f) => {
    expect(f.message).toContain(OUTLINE);
    // Accepted as it is: the body comes back unchanged, which is no edit.
    return { action: 'accept', content: { accepted: true, 'edits.outline': OUTLINE } };
  },
  (f) => {
    expect(f.message).toContain(DRAFT_1);
    return { action: 'accept', content: { accepted: false, reason: 'Scene 2 drags.' } };
  },
  (f) => {
    expect(f.message).toContain('Describe the changes wanted');
    return { action: 'accept', content: { text: 'Name the keeper in the first line.' } };
  },
  (f) => {
    expect(f.message).toContain(DRAFT_2);
    return { action: 'accept', content: { accepted: true } };
  },
];

async function serveStory(model = storyModel()) {
  const store = new SqliteStore(tmp.path('mcp.db'));
  const runtime = createRuntime({ model, store });
  const server = await serveForAna(runtime, store, open);
  return { store, server, model };
}

const BOB_TOKEN = 'token-of-bob-0123456789';

/** `steward serve` on its own SQLite file with the story model and two callers, ana and bob (neither acts for others); its log lines to `logs`. */
async function serveAnaAndBob(file: string, logs: string[] = []) {
  const store = new SqliteStore(tmp.path(file));
  const runtime = createRuntime({ model: storyModel(), store });
  const tokens = [
    { name: 'ana', token: ANA_TOKEN, actForOthers: false },
    { name: 'bob', token: BOB_TOKEN, actForOthers: false },
  ];
  const server = await startServe({ runtime, store, port: 0, tokens, log: (m) => logs.push(m) });
  open.push(async () => {
    await server.close();
    store.close();
  });
  return { server, store };
}

describe('MCP over Streamable HTTP (steward serve)', () => {
  it.each<Era>(['modern', 'legacy'])('runs a short story from one tool call through every wait to done (%s protocol)', async (era) => {
    const { server, store } = await serveStory();
    const person = scriptedPerson((form, n) => STORY_ANSWERS[n]!(form));
    const client = await mcpClient(httpTransport(server.url, ANA_TOKEN), era, person);
    open.push(() => client.close());
    expect(client.getProtocolEra()).toBe(era);

    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['run_short-story', 'continue_session', 'list_sessions', 'read_session']));

    const progress: string[] = [];
    const steps: number[] = [];
    const result = await client.callTool(
      { name: 'run_short-story', arguments: { request: REQUEST } },
      {
        onprogress: (p) => {
          progress.push(String(p.message));
          // The client's own note of each round it fulfils aside: the server's.
          if (!String(p.message).startsWith('Fulfilling input required')) steps.push(p.progress);
        },
        timeout: 60_000,
      },
    );
    expect(result, JSON.stringify(result)).toMatchObject({ structuredContent: { status: 'done' } });
    expect(person.shown).toHaveLength(STORY_ANSWERS.length);
    expect(result.isError).toBeFalsy();
    const outcome = result.structuredContent as {
      sessionId: string;
      status: string;
      summary: string;
      artifacts: { workerId: string; tags: Record<string, string> }[];
    };
    expect(outcome).toMatchObject({ status: 'done', summary: SUMMARY });
    expect(outcome.artifacts.map((a) => a.tags)).toEqual([{ brief: `${BRIEF}\n\nEdited by ana.` }, { outline: OUTLINE }, { draft: DRAFT_2 }]);
    expect(textOf(result)).toContain(SUMMARY);
    expect(progress.some((p) => p.startsWith('manager round'))).toBe(true);
    // The server's progress only grows, over the rounds of the call too (on the 2025 protocol they share one token).
    expect(
      steps.every((n, i) => i === 0 || n > steps[i - 1]!),
      steps.join(','),
    ).toBe(true);

    // Every decision is ana's, through MCP; the edits are in the journal.
    const decisions = (await readJournal(store, outcome.sessionId)).filter((e) => e.kind === 'event' && String(e.type).startsWith('user_'));
    expect(new Set(decisions.map((e) => `${(e.payload as { by?: string }).by} ${(e.payload as { through?: string }).through}`))).toEqual(new Set(['ana mcp']));
    const payloads = decisions.map((e) => e.payload as Record<string, unknown>);
    expect(payloads).toContainEqual(expect.objectContaining({ type: 'user_approved_next_step', edits: { reason: 'Fix the decisions; keep it quiet.' } }));
    expect(payloads).toContainEqual(
      expect.objectContaining({ type: 'user_accepted_artifact', artifactId: 'a1', edits: { brief: `${BRIEF}\n\nEdited by ana.` } }),
    );
    expect(payloads.find((p) => p.type === 'user_accepted_artifact' && p.artifactId === 'a2')).not.toHaveProperty('edits');
  });

  it('refuses a forged request state, leaves a declined form waiting, and counts a retried answer once', async () => {
    const { server, store } = await serveStory();
    const client = await mcpClient(httpTransport(server.url, ANA_TOKEN), 'modern', undefined, true);
    open.push(() => client.close());
    const args = { request: REQUEST };

    const first = await callRound(client, 'run_short-story', args);
    if (!isInputRequired(first)) throw new Error(`expected input_required, got ${JSON.stringify(first)}`);
    const [key] = Object.keys(first.inputRequests ?? {});
    const state = first.requestState!;
    const sessionId = key!.split('#')[0]!;

    // A state this server did not sign: refused before anything runs.
    const [body] = state.split('.');
    const forgedClaims = Buffer.from(JSON.stringify({ v: 1, s: 'someone-else', w: 1, c: 'ana' })).toString('base64url');
    for (const forged of [`${forgedClaims}.${state.split('.')[1]}`, `${body}.AAAA`])
      await expect(
        callRound(client, 'run_short-story', args, { requestState: forged, inputResponses: { [key!]: { action: 'accept', content: { text: 'x' } } } }),
      ).rejects.toThrow(/Invalid or expired requestState/);

    // Declined: nothing sent, the session still waits, and the result says how to come back.
    const declined = await callRound(client, 'run_short-story', args, { requestState: state, inputResponses: { [key!]: { action: 'decline' } } });
    expect(isInputRequired(declined)).toBe(false);
    expect(textOf(declined)).toMatch(/Nothing was sent: .*declined.*still waits \(intake, wait 2\).*continue_session/);
    expect((declined as { structuredContent?: unknown }).structuredContent).toMatchObject({ sessionId, status: 'waiting', wait: 2 });

    // The same answer twice (a host that retries after a timeout): decided once, both calls go on to the next wait.
    const answer = { [key!]: { action: 'accept', content: { text: 'Adults, 2,000 words.' } } };
    const once = await callRound(client, 'run_short-story', args, { requestState: state, inputResponses: answer });
    const twice = await callRound(client, 'run_short-story', args, { requestState: state, inputResponses: answer });
    if (!isInputRequired(once) || !isInputRequired(twice)) throw new Error('expected the next wait');
    expect(Object.keys(twice.inputRequests ?? {})).toEqual(Object.keys(once.inputRequests ?? {}));
    const texts = (await readJournal(store, sessionId)).filter((e) => e.type === 'user_submitted_input').map((e) => (e.payload as { text: string }).text);
    expect(texts).toEqual([REQUEST, 'Adults, 2,000 words.']);

    // Answered elsewhere (the REST API) meanwhile: the call with the older state goes on from where the session is.
    const sent = await fetch(`${server.url}/sessions/${sessionId}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANA_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'user_confirmed_intake' }),
    });
    expect(sent.status).toBe(200);
    const later = await callRound(client, 'run_short-story', args, {
      requestState: once.requestState!,
      inputResponses: { [Object.keys(once.inputRequests ?? {})[0]!]: { action: 'accept', content: { confirm: true } } },
    });
    if (!isInputRequired(later)) throw new Error('expected the approval');
    expect(Object.values(later.inputRequests ?? {}).map((r) => (r.params as { message: string }).message)).toEqual(['Run brief-writer: Fix the decisions.']);
    expect((await readJournal(store, sessionId)).filter((e) => e.type === 'user_confirmed_intake')).toHaveLength(1);

    // continue_session comes back to the wait; list and read show the session.
    const back = await callRound(client, 'continue_session', { sessionId });
    if (!isInputRequired(back)) throw new Error('expected the approval again');
    expect(Object.keys(back.inputRequests ?? {})).toEqual(Object.keys(later.inputRequests ?? {}));
    expect(textOf(await client.callTool({ name: 'list_sessions', arguments: {} }))).toContain(sessionId);
    expect(textOf(await client.callTool({ name: 'read_session', arguments: { sessionId } }))).toContain('waits: approve_step');
  });

  it("keeps each caller to their own sessions: another's session is no session to them, and a state issued to another is refused", async () => {
    const { server, store } = await serveAnaAndBob('two.db');
    const ana = await mcpClient(httpTransport(server.url, ANA_TOKEN), 'modern', undefined, true);
    const bob = await mcpClient(httpTransport(server.url, BOB_TOKEN), 'modern', undefined, true);
    open.push(
      () => ana.close(),
      () => bob.close(),
    );

    // The tags go on the blackboard before the team starts.
    const first = await callRound(ana, 'run_short-story', { request: REQUEST, tags: { notes: 'Keep it quiet.' } });
    if (!isInputRequired(first)) throw new Error('expected a form');
    const sessionId = Object.keys(first.inputRequests ?? {})[0]!.split('#')[0]!;
    expect(textOf(await ana.callTool({ name: 'read_session', arguments: { sessionId } }))).toContain('[notes v1 by app]\nKeep it quiet.');

    const theirs = await bob.callTool({ name: 'continue_session', arguments: { sessionId } });
    expect(theirs.isError).toBe(true);
    expect(textOf(theirs)).toBe(`No session ${sessionId}. List yours with list_sessions.`);
    expect(textOf(await bob.callTool({ name: 'read_session', arguments: { sessionId } }))).toContain('No session');
    expect(textOf(await bob.callTool({ name: 'list_sessions', arguments: {} }))).toBe('No sessions.');
    await expect(
      callRound(bob, 'run_short-story', { request: REQUEST }, { requestState: first.requestState!, inputResponses: { x: { action: 'accept', content: {} } } }),
    ).rejects.toThrow(/Invalid or expired requestState/);
    expect((await readJournal(store, sessionId)).filter((e) => String(e.type).startsWith('user_'))).toHaveLength(1);
  });

  it('asks a refused answer again with why, keeps a tag named __proto__, and tells the host no more of its own failure than that it failed', async () => {
    const logs: string[] = [];
    const { server, store } = await serveAnaAndBob('refused.db', logs);
    const client = await mcpClient(httpTransport(server.url, ANA_TOKEN), 'modern', undefined, true);
    open.push(() => client.close());
    const args = { request: REQUEST, tags: JSON.parse('{"__proto__": "A tag of that name.", "notes": "Quiet."}') as Record<string, string> };
    let round = await callRound(client, 'run_short-story', args);
    const answer = async (content: Record<string, unknown>) => {
      if (!isInputRequired(round)) throw new Error(`expected a form, got ${textOf(round)}`);
      const [key] = Object.keys(round.inputRequests ?? {});
      round = await callRound(client, 'run_short-story', args, {
        requestState: round.requestState!,
        inputResponses: { [key!]: { action: 'accept', content } },
      });
      return round;
    };
    if (!isInputRequired(round)) throw new Error('expected a form');
    const sessionId = Object.keys(round.inputRequests ?? {})[0]!.split('#')[0]!;
    expect(textOf(await client.callTool({ name: 'read_session', arguments: { sessionId } }))).toContain('[__proto__ v1 by app]\nA tag of that name.');

    await answer({ text: 'Adults.' });
    await answer({ confirm: true });
    // The chart refuses a role the worker does not have: the same wait's form again, with why above it.
    const refused = await answer({ approved: true, roleId: 'no-such-role' });
    if (!isInputRequired(refused)) throw new Error('expected the form again');
    const message = (Object.values(refused.inputRequests ?? {})[0]!.params as { message: string }).message;
    expect(message).toMatch(/^Your answer was not taken: .*no-such-role.*\n\nRun brief-writer: Fix the decisions\.$/s);

    // A failure of the server's own (its store, say): logged; the host hears only that it failed.
    store.list = () => Promise.reject(new Error('connect ECONNREFUSED postgres://steward:s3cret@db.internal:5432/steward'));
    const failed = await client.callTool({ name: 'list_sessions', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('The server failed on this call; its log has the details. Try again, or come back to the session with continue_session.');
    expect(logs.join('\n')).toContain('ECONNREFUSED');
  });

  it("ends a caller's oldest MCP sessions of the 2025 protocol beyond their share, never another caller's", async () => {
    const { server } = await serveAnaAndBob('legacy.db');
    const ana = await mcpClient(httpTransport(server.url, ANA_TOKEN), 'legacy');
    open.push(() => ana.close());
    const bobs: Awaited<ReturnType<typeof mcpClient>>[] = [];
    for (let i = 0; i < 20; i++) bobs.push(await mcpClient(httpTransport(server.url, BOB_TOKEN), 'legacy'));
    open.push(() => Promise.all(bobs.map((b) => b.close().catch(() => {}))));
    // Ana's session is still hers; bob's first ones were ended (a request naming them: 404, "initialize a new one").
    expect(textOf(await ana.callTool({ name: 'list_sessions', arguments: {} }))).toBe('No sessions.');
    await expect(bobs[0]!.callTool({ name: 'list_sessions', arguments: {} })).rejects.toThrow();
    expect(textOf(await bobs[19]!.callTool({ name: 'list_sessions', arguments: {} }))).toBe('No sessions.');
  });

  it('starts nothing for a host that shows no forms, and says why', async () => {
    const { server, store } = await serveStory();
    const client = new Client({ name: 'formless-host', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(httpTransport(server.url, ANA_TOKEN));
    open.push(() => client.close());
    const before = (await store.list()).sessions.length;
    const result = await client.callTool({ name: 'run_short-story', arguments: { request: REQUEST } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^This host shows no forms .*nothing was started\./);
    expect((await store.list()).sessions).toHaveLength(before);
  });
});
