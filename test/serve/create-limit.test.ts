/**
 * One create limit for every route that creates a session: POST /sessions, a fork, an AG-UI
 * run on a new thread and an A2A message to a new context spend the same caller's allowance,
 * and each refuses past it in its own terms (429 with Retry-After; RUN_ERROR rate_limited with
 * Retry-After; a JSON-RPC error with 429 and Retry-After). Other callers are not affected.
 * A refused first request leaves no session behind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { useTempDir } from '../support/temp.js';
import { client } from './http.js';
import { agUiAgent, runError } from '../protocols/ag-ui-client.js';
import { a2aClient, request } from '../protocols/a2a-client.js';

const tmp = useTempDir('steward-create-limit-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const ANA = 'token-of-ana-0123456789';
const BOB = 'token-of-bob-0123456789';

async function serve(options: { maxCreatesPerMinute?: number; userTextChars?: number } = {}): Promise<{ server: ServeHandle; store: SqliteStore }> {
  const store = new SqliteStore(tmp.path(`${Math.random().toString(36).slice(2)}.db`));
  const runtime = createRuntime({ model: new DemoModel(), store, ...(options.userTextChars ? { limits: { userTextChars: options.userTextChars } } : {}) });
  const server = await startServe({
    runtime,
    store,
    port: 0,
    tokens: [
      { name: 'ana', token: ANA, actForOthers: false },
      { name: 'bob', token: BOB, actForOthers: false },
    ],
    ...(options.maxCreatesPerMinute !== undefined ? { maxCreatesPerMinute: options.maxCreatesPerMinute } : {}),
    log: () => {},
  });
  open.push(async () => {
    await server.close();
    store.close();
  });
  return { server, store };
}

const sessionsIn = async (store: SqliteStore) => (await store.list({ limit: 200 })).sessions.length;

describe('one create limit for every route that creates a session', () => {
  it('POST /sessions, a fork, a new AG-UI thread and a new A2A context spend one allowance; past it each refuses with its Retry-After', async () => {
    const { server, store } = await serve({ maxCreatesPerMinute: 4 });
    const ana = client(server.url, ANA);
    const id: string = (await ana.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await ana.post(`/sessions/${id}/fork`, {})).status).toBe(201);
    expect(runError(await agUiAgent(`${server.url}/ag-ui/tiny`, 'thread-1', ANA).run())).toBeUndefined();
    const a2a = await a2aClient(server.url, 'tiny', ANA);
    await a2a.sendMessage(request({ text: 'A note about otters.' }, { contextId: 'context-1' }));
    expect(await sessionsIn(store)).toBe(4); // the session, its fork, the thread, the context

    // The allowance is spent: every creating route refuses, in its protocol's terms.
    const create = await ana.post('/sessions', { packageId: 'tiny' });
    expect(create.status).toBe(429);
    expect(create.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('--max-creates-per-minute') });
    expect(Number(create.headers.get('retry-after'))).toBeGreaterThan(0);

    const fork = await ana.post(`/sessions/${id}/fork`, {});
    expect(fork.status).toBe(429);
    expect(fork.body.error.code).toBe('rate_limited');
    expect(Number(fork.headers.get('retry-after'))).toBeGreaterThan(0);

    const run = await fetch(`${server.url}/ag-ui/tiny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANA}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ threadId: 'thread-2', runId: 'r1', messages: [], tools: [], context: [], state: {}, forwardedProps: {} }),
    });
    expect(Number(run.headers.get('retry-after'))).toBeGreaterThan(0);
    const events = (await run.text())
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
    expect(events).toEqual([{ type: 'RUN_ERROR', code: 'rate_limited', message: expect.stringContaining('--max-creates-per-minute') }]);

    const rpc = await fetch(`${server.url}/a2a/tiny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANA}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm-x', role: 'ROLE_USER', contextId: 'context-2', parts: [{ text: 'Another note.' }] } },
      }),
    });
    expect(rpc.status).toBe(429);
    expect(Number(rpc.headers.get('retry-after'))).toBeGreaterThan(0);
    const answer = (await rpc.json()) as { error: { code: number; message: string; data?: Array<{ metadata?: Record<string, string> }> } };
    expect(answer.error.message).toContain('--max-creates-per-minute');
    expect(answer.error.data?.[0]?.metadata).toMatchObject({ code: 'rate_limited' });
    // The SDK's client reads it as the refusal it is.
    await expect(a2a.sendMessage(request({ text: 'Another note.' }, { contextId: 'context-3' }))).rejects.toThrow(/Too many sessions created/);

    expect(await sessionsIn(store)).toBe(4);
    expect(await store.load('thread-2')).toBeUndefined();
    expect(await store.load('context-2')).toBeUndefined();

    // What exists goes on (no new session), and another caller has an allowance of their own.
    expect(runError(await agUiAgent(`${server.url}/ag-ui/tiny`, 'thread-1', ANA).run())).toBeUndefined();
    expect((await client(server.url, BOB).post('/sessions', { packageId: 'tiny' })).status).toBe(201);
  });

  it('a first A2A message over the text limit leaves no session behind, and spends no creation', async () => {
    const { server, store } = await serve({ maxCreatesPerMinute: 1, userTextChars: 20 });
    const a2a = await a2aClient(server.url, 'tiny', ANA);
    await expect(a2a.sendMessage(request({ text: 'x'.repeat(21) }, { contextId: 'too-long' }))).rejects.toThrow(/userTextChars/);
    expect(await store.load('too-long')).toBeUndefined();
    await a2a.sendMessage(request({ text: 'A short one.' }, { contextId: 'short' }));
    expect(await store.load('short')).toBeDefined();
  });

  it('an AG-UI run on a new thread refused for its first message (over the text limit) or for a resume leaves no session behind', async () => {
    const { server, store } = await serve({ userTextChars: 20 });
    const long = agUiAgent(`${server.url}/ag-ui/tiny`, 'too-long', ANA);
    long.agent.addMessage({ id: 'u1', role: 'user', content: 'x'.repeat(21) });
    expect(runError(await long.run())).toMatchObject({ code: 'limit_exceeded' });
    expect(await store.load('too-long')).toBeUndefined();
    const resumed = await agUiAgent(`${server.url}/ag-ui/tiny`, 'never-started', ANA).run({
      resume: [{ interruptId: 'never-started#w1', status: 'resolved', payload: { text: 'Hi.' } }],
    });
    expect(runError(resumed)).toMatchObject({ code: 'interrupt_stale' });
    expect(await store.load('never-started')).toBeUndefined();
    const short = agUiAgent(`${server.url}/ag-ui/tiny`, 'short', ANA);
    short.agent.addMessage({ id: 'u1', role: 'user', content: 'A short one.' });
    expect(runError(await short.run())).toBeUndefined();
    expect(await store.load('short')).toBeDefined();
  });

  it('SessionHost.create checks the first event and the admission before it stores anything', async () => {
    const { server, store } = await serve({ userTextChars: 20 });
    const first = (text: string) => ({ type: 'user_submitted_input', text });
    await expect(server.host.create({ packageId: 'tiny', id: 'long', first: first('x'.repeat(21)) })).rejects.toMatchObject({ code: 'limit_exceeded' });
    await expect(server.host.create({ packageId: 'tiny', id: 'bad', first: { type: 'user_submitted_input' } })).rejects.toMatchObject({
      code: 'invalid_event',
      status: 400,
    });
    await expect(
      server.host.create({
        packageId: 'tiny',
        id: 'refused',
        first: first('fine'),
        admit: () => {
          throw new Error('refused');
        },
      }),
    ).rejects.toThrow('refused');
    expect(await sessionsIn(store)).toBe(0);
    await server.host.create({ packageId: 'tiny', id: 'fine', first: first('fine') });
    expect(await store.load('fine')).toBeDefined();
  });
});
