/**
 * Who may see and decide a session (src/http/access.ts), over `steward serve`'s real HTTP on
 * SQLite and PostgreSQL: a session is its creator's (a named token's name) and its
 * participants' (by name, or `group:NAME` for a token in that group), and the `admin` group's;
 * anyone else is answered on every route — REST, the stream and its tickets, a fork, AG-UI,
 * A2A — exactly as for an id that does not exist. Lists are filtered in the store's query and
 * page without repeating or missing a session. The shared STEWARD_TOKEN still sees everything,
 * and an app's own `access` rule replaces the default one (reading without deciding: 403).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import { startServe, type ServeOptions } from '../../src/serve/server.js';
import { createServeApp } from '../../src/serve/embed.js';
import { routes as serveRoutes } from '../../src/serve/app.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import type { NamedToken } from '../../src/http/tokens.js';
import type { AccessRule } from '../../src/http/access.js';
import { inspectorApi, inspectorContext } from '../../src/inspect/server.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { useTempDir } from '../support/temp.js';
import { client, type Reply } from './http.js';

const tmp = useTempDir('steward-access-');
const pg = usePostgres();
let pgUrl = '';
beforeAll(async () => {
  if (postgresUnavailable) return;
  pgUrl = await pg.createDatabase();
}, 60_000);

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const TOKENS = {
  alice: 'alice-0123456789abcdef',
  bob: 'bob-0123456789abcdef00',
  carol: 'carol-0123456789abcdef',
  dave: 'dave-0123456789abcdef0',
  olga: 'olga-0123456789abcdef0',
  desk: 'desk-0123456789abcdef0',
} as const;
type Who = keyof typeof TOKENS;
const NAMED: NamedToken[] = [
  { name: 'alice', token: TOKENS.alice, actForOthers: false },
  { name: 'bob', token: TOKENS.bob, actForOthers: false },
  { name: 'carol', token: TOKENS.carol, actForOthers: false, groups: ['ops'] },
  { name: 'dave', token: TOKENS.dave, actForOthers: false, groups: ['qa'] },
  { name: 'olga', token: TOKENS.olga, actForOthers: false, groups: ['ops', 'admin'] },
  { name: 'front-desk', token: TOKENS.desk, actForOthers: true },
];

type StoreKind = 'SQLite' | 'PostgreSQL';
async function makeStore(kind: StoreKind): Promise<SessionStore> {
  const store: SessionStore =
    kind === 'SQLite'
      ? new SqliteStore(tmp.path(`${randomBytes(4).toString('hex')}.db`))
      : new PostgresStore(pgUrl, { schema: `t_${randomBytes(5).toString('hex')}` });
  open.push(() => store.close());
  return store;
}

/** Links on, so that making one is checked like every other route of a session. */
const LINK_SECRET = 'a-link-secret-of-at-least-32-bytes!';

async function serve(store: SessionStore, options: Partial<ServeOptions> = { tokens: NAMED, linkSecret: LINK_SECRET }) {
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, maxCreatesPerMinute: 0, log: () => {}, ...options });
  open.push(() => server.close());
  const as = (who: Who) => client(server.url, TOKENS[who]);
  return { server, runtime, as };
}

/** An answer as a client sees it, with `id` written as ID: what tells one session's answer from another's. */
const shown = (reply: Reply, id: string) => ({ status: reply.status, body: JSON.parse(JSON.stringify(reply.body).replaceAll(id, 'ID')) });

/** The AG-UI events of one run on `threadId` (a user message when `text`), read whole. */
async function agUiRun(url: string, token: string, threadId: string, text?: string): Promise<Array<{ type: string; code?: string; message?: string }>> {
  const response = await fetch(`${url}/ag-ui/tiny`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      threadId,
      runId: `r-${randomBytes(3).toString('hex')}`,
      state: {},
      messages: text ? [{ id: `u-${randomBytes(3).toString('hex')}`, role: 'user', content: text }] : [],
      tools: [],
      context: [],
      forwardedProps: {},
    }),
  });
  expect(response.status).toBe(200);
  return (await response.text())
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)));
}

/** One A2A JSON-RPC call (the 0.3 names: no A2A-Version header), its JSON answer. */
async function a2a(url: string, token: string, method: string, params: unknown): Promise<any> {
  const response = await fetch(`${url}/a2a/tiny`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return response.json();
}

/** Opens the stream, reads its status and type, and closes it. */
async function streamStatus(url: string, path: string, token?: string): Promise<{ status: number; type: string | null; body?: unknown }> {
  const abort = new AbortController();
  const response = await fetch(`${url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: abort.signal });
  const type = response.headers.get('content-type');
  const body = type?.startsWith('application/json') ? await response.json() : undefined;
  abort.abort();
  return { status: response.status, type, ...(body !== undefined ? { body } : {}) };
}

/** Every page of GET /sessions as `who`, `limit` at a time: each page full but the last, each session once. */
async function walk(http: ReturnType<typeof client>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    expect(pages).toBeLessThan(50);
    const page: Reply = await http.get(`/sessions?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.sessions.map((s: { id: string }) => s.id));
    if (page.body.next === null) break;
    expect(page.body.sessions).toHaveLength(limit);
    cursor = page.body.next;
  }
  expect(new Set(ids).size).toBe(ids.length);
  return ids;
}

describe.each(['SQLite', 'PostgreSQL'] as const)('who may see and decide a session (%s)', (kind) => {
  const skip = kind === 'PostgreSQL' && postgresUnavailable !== null;

  it.skipIf(skip)("answers another caller's session on every route exactly as an id that does not exist", { timeout: 60_000 }, async () => {
    const store = await makeStore(kind);
    const { server, as } = await serve(store);
    const alice = as('alice');
    const bob = as('bob');
    const created = await alice.post('/sessions', { packageId: 'tiny' });
    expect(created.status).toBe(201);
    const id: string = created.body.view.id;
    expect(await store.load(id)).toMatchObject({ owner: 'alice', participants: [] });
    const before = await store.journal(id);
    const unknown = 's_nobody_has_this';

    const routes: Array<[string, (target: string) => Promise<Reply>]> = [
      ['GET /sessions/{id}', (target) => bob.get(`/sessions/${target}`)],
      ['POST /sessions/{id}/events', (target) => bob.post(`/sessions/${target}/events`, { type: 'user_submitted_input', text: 'Mine now.' })],
      ['GET /sessions/{id}/journal', (target) => bob.get(`/sessions/${target}/journal`)],
      ['POST /sessions/{id}/stream-tickets', (target) => bob.post(`/sessions/${target}/stream-tickets`, {})],
      ['POST /sessions/{id}/fork', (target) => bob.post(`/sessions/${target}/fork`, {})],
      ['GET /sessions/{id}/audit', (target) => bob.get(`/sessions/${target}/audit`)],
      ['POST /sessions/{id}/links', (target) => bob.post(`/sessions/${target}/links`, { recipient: 'bob' })],
    ];
    // Every route of a session is in the list (the stream is checked below): a new one fails here until it is.
    const sessionRoutes = serveRoutes.filter((r) => r.route.path.includes('{id}')).map((r) => `${r.route.method.toUpperCase()} ${r.route.path}`);
    expect(sessionRoutes.filter((r) => r !== 'GET /sessions/{id}/stream' && !routes.some(([checked]) => checked === r))).toEqual([]);
    for (const [route, call] of routes) {
      const hidden = shown(await call(id), id);
      expect(hidden.status, route).toBe(404);
      expect(hidden.body.error.code, route).toBe('session_not_found');
      expect(hidden, route).toEqual(shown(await call(unknown), unknown));
    }
    const stream = await streamStatus(server.url, `/sessions/${id}/stream`, TOKENS.bob);
    expect(stream.status).toBe(404);
    expect(JSON.stringify(stream.body).replaceAll(id, 'ID')).toBe(
      JSON.stringify((await streamStatus(server.url, `/sessions/${unknown}/stream`, TOKENS.bob)).body).replaceAll(unknown, 'ID'),
    );
    // Hers are hers: the same routes answer her, and her ticket opens the stream.
    expect((await alice.get(`/sessions/${id}`)).status).toBe(200);
    const ticket = (await alice.post(`/sessions/${id}/stream-tickets`, {})).body.ticket;
    expect(await streamStatus(server.url, `/sessions/${id}/stream?ticket=${ticket}`)).toMatchObject({
      status: 200,
      type: expect.stringContaining('text/event-stream'),
    });

    // AG-UI: a run on her thread is refused as an unknown session, before RUN_STARTED, nothing sent.
    const run = await agUiRun(server.url, TOKENS.bob, id, 'Mine now.');
    expect(run.map((e) => e.type)).toEqual(['RUN_ERROR']);
    expect(JSON.parse(JSON.stringify(run[0]).replaceAll(id, 'ID'))).toEqual({
      type: 'RUN_ERROR',
      code: 'session_not_found',
      message: shown(await bob.get(`/sessions/${unknown}`), unknown).body.error.message,
    });
    // A2A: her task is an unknown task to him, for GetTask and for a message to it.
    const get = await a2a(server.url, TOKENS.bob, 'tasks/get', { id });
    expect(get.error).toBeDefined();
    expect(JSON.stringify(get).replaceAll(id, 'ID')).toBe(
      JSON.stringify(await a2a(server.url, TOKENS.bob, 'tasks/get', { id: unknown })).replaceAll(unknown, 'ID'),
    );
    const message = (taskId: string) => ({
      message: { kind: 'message', messageId: `m-${taskId}`, role: 'user', parts: [{ kind: 'text', text: 'Mine now.' }], taskId },
    });
    const sent = await a2a(server.url, TOKENS.bob, 'message/send', message(id));
    expect(sent.error).toBeDefined();
    expect(JSON.stringify(sent).replaceAll(id, 'ID')).toBe(
      JSON.stringify(await a2a(server.url, TOKENS.bob, 'message/send', message(unknown))).replaceAll(unknown, 'ID'),
    );

    // Nothing of his reached her session, and his list does not show it.
    expect(await store.journal(id)).toEqual(before);
    expect((await bob.get('/sessions')).body.sessions.map((s: { id: string }) => s.id)).not.toContain(id);
    expect((await alice.get('/sessions')).body.sessions.map((s: { id: string }) => s.id)).toEqual([id]);
  });

  it.skipIf(skip)('lets participants by name and by group, and the admin group, see and decide it; no one else', { timeout: 60_000 }, async () => {
    const store = await makeStore(kind);
    const { server, as } = await serve(store);
    const created = await as('alice').post('/sessions', { packageId: 'tiny', participants: ['bob', 'group:ops', 'bob'] });
    expect(created.status).toBe(201);
    const id: string = created.body.view.id;
    expect(await store.load(id)).toMatchObject({ owner: 'alice', participants: ['bob', 'group:ops'] });
    const listed = (await as('alice').get('/sessions')).body.sessions[0];
    expect(listed).toMatchObject({ id, owner: 'alice', participants: ['bob', 'group:ops'] });

    // The front end that acts for its users (act-for-others) answers for what they see, as for who they are.
    for (const who of ['alice', 'bob', 'carol', 'olga', 'desk'] as const) {
      expect((await as(who).get(`/sessions/${id}`)).status, who).toBe(200);
      expect((await as(who).get(`/sessions/${id}/journal`)).status, who).toBe(200);
      expect(
        (await as(who).get('/sessions')).body.sessions.map((s: { id: string }) => s.id),
        who,
      ).toContain(id);
    }
    expect((await as('dave').get(`/sessions/${id}`)).status).toBe(404);
    expect((await as('dave').get('/sessions')).body.sessions).toEqual([]);

    // A participant decides: the event is theirs (`by`), and a group member's ticket opens the stream (the ticket carries the groups).
    const sent = await as('bob').post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect((await store.journal(id)).find((e) => e.type === 'user_submitted_input')?.payload).toMatchObject({ by: 'bob' });
    const ticket = (await as('carol').post(`/sessions/${id}/stream-tickets`, {})).body.ticket;
    expect(await streamStatus(server.url, `/sessions/${id}/stream?ticket=${ticket}`)).toMatchObject({ status: 200 });
    expect((await streamStatus(server.url, `/sessions/${id}/stream`, TOKENS.carol)).status).toBe(200);
    // AG-UI and A2A for the group member: the thread is theirs to read.
    const run = await agUiRun(server.url, TOKENS.carol, id);
    expect(run.map((e) => e.type)).toContain('RUN_FINISHED');
    expect((await a2a(server.url, TOKENS.olga, 'tasks/get', { id })).result).toMatchObject({ id });
    expect((await a2a(server.url, TOKENS.dave, 'tasks/get', { id })).error).toBeDefined();

    // A fork is the forker's own, with the participants it names.
    const fork = await as('carol').post(`/sessions/${id}/fork`, { participants: ['dave'] });
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    expect(await store.load(fork.body.view.id)).toMatchObject({ owner: 'carol', participants: ['dave'] });
    expect((await as('dave').get(`/sessions/${fork.body.view.id}`)).status).toBe(200);
    expect((await as('alice').get(`/sessions/${fork.body.view.id}`)).status).toBe(404);

    // New AG-UI threads and A2A contexts are their creator's.
    expect((await agUiRun(server.url, TOKENS.dave, 'dave-thread', 'Oolong.')).map((e) => e.type)).toContain('RUN_FINISHED');
    expect(await store.load('dave-thread')).toMatchObject({ owner: 'dave' });
    const started = await a2a(server.url, TOKENS.dave, 'message/send', {
      message: { kind: 'message', messageId: 'm-dave', role: 'user', parts: [{ kind: 'text', text: 'Oolong.' }], contextId: 'dave-context' },
    });
    expect(started.result, JSON.stringify(started)).toMatchObject({ id: 'dave-context' });
    expect(await store.load('dave-context')).toMatchObject({ owner: 'dave' });
    expect((await as('bob').get('/sessions/dave-context')).status).toBe(404);

    // Participants are checked: a bad one is a 400 naming it, and nothing is created.
    const bad = await as('alice').post('/sessions', { packageId: 'tiny', participants: ['group:', 'x\u0007y'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['participants.0', 'participants.1']);
    const tooMany = await as('alice').post('/sessions', { packageId: 'tiny', participants: Array.from({ length: 51 }, (_, i) => `p${i}`) });
    expect(tooMany.body.error.message).toContain('at most 50 participants');
  });

  it.skipIf(skip)(
    'filters lists in the query: 250 sessions of mixed owners, paged 100 at a time, none shown twice or missed',
    { timeout: 120_000 },
    async () => {
      const store = await makeStore(kind);
      const { as, runtime } = await serve(store);
      const owners = ['alice', 'bob', 'carol', null];
      for (let i = 0; i < 250; i++) {
        const participants = [...(i % 5 === 0 ? ['bob'] : []), ...(i % 9 === 0 ? ['group:ops'] : [])];
        const session = await runtime.createSession({ packageId: 'tiny', owner: owners[i % 4]!, participants });
        await session.close();
      }
      const all = (await walk(as('olga'), 100)).length;
      expect(all).toBe(250);
      const summaries = (await store.list({ limit: 1000 })).sessions;
      const expected = (sees: (s: (typeof summaries)[number]) => boolean) => summaries.filter(sees).map((s) => s.id);
      // alice: her 63; bob: his 63 and every 5th (13 of those his already); carol: hers and every 9th (by ops); dave: none.
      const cases: Array<[Who, string[]]> = [
        ['alice', expected((s) => s.owner === 'alice')],
        ['bob', expected((s) => s.owner === 'bob' || s.participants.includes('bob'))],
        ['carol', expected((s) => s.owner === 'carol' || s.participants.includes('group:ops'))],
        ['dave', []],
      ];
      expect(cases.map(([, ids]) => ids.length)).toEqual([63, 63 + 50 - 13, 62 + 28 - 7, 0]);
      for (const [who, ids] of cases) {
        expect(await walk(as(who), 100), who).toEqual(ids);
        expect(await walk(as(who), 30), who).toEqual(ids);
      }
    },
  );

  it.skipIf(skip)('keeps the shared STEWARD_TOKEN as one trusted caller: it sees and decides every session', { timeout: 60_000 }, async () => {
    const store = await makeStore(kind);
    const shared = 'shared-0123456789abcdef';
    const { server, runtime } = await serve(store, { token: shared });
    const theirs = await runtime.createSession({ packageId: 'tiny', owner: 'alice', participants: ['group:ops'] });
    await theirs.close();
    const http = client(server.url, shared);
    const mine = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect(await store.load(mine)).toMatchObject({ owner: null, participants: [] });
    expect((await http.get('/sessions')).body.sessions.map((s: { id: string }) => s.id).sort()).toEqual([mine, theirs.id].sort());
    expect((await http.get(`/sessions/${theirs.id}`)).status).toBe(200);
    expect((await http.post(`/sessions/${theirs.id}/events`, { type: 'user_submitted_input', text: 'Green tea.' })).status).toBe(200);
  });
});

describe('one read of a session per request', () => {
  it("GET /sessions/{id} and making a link read the stored session once: the access check's read is the view's", async () => {
    const store = new MemoryStore();
    const { as } = await serve(store);
    const id: string = (await as('alice').post('/sessions', { packageId: 'tiny' })).body.view.id;
    await as('alice').post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A short note.' });
    const load = store.load.bind(store);
    let reads = 0;
    store.load = (sessionId) => {
      reads += 1;
      return load(sessionId);
    };
    expect((await as('alice').get(`/sessions/${id}`)).status).toBe(200);
    expect(reads).toBe(1);
    reads = 0;
    expect((await as('alice').post(`/sessions/${id}/links`, { recipient: 'alice' })).status).toBe(201);
    expect(reads).toBe(1);
  });
});

describe("an app's own access rule", () => {
  async function app(access: AccessRule) {
    const store = new MemoryStore();
    const runtime: Runtime = createRuntime({ model: new DemoModel(), store });
    const steward = createServeApp({
      runtime,
      store,
      auth: { tokens: NAMED },
      access,
      linkSecret: LINK_SECRET,
      publicUrl: 'http://127.0.0.1:1',
      log: () => {},
    });
    open.push(() => steward.close(0));
    const as = (who: Who) => {
      const call = async (method: string, path: string, body?: unknown): Promise<Reply> => {
        const res = await steward.app.request(path, {
          method,
          headers: { authorization: `Bearer ${TOKENS[who]}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        const text = await res.text();
        return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text, headers: res.headers };
      };
      return { get: (path: string) => call('GET', path), post: (path: string, body?: unknown) => call('POST', path, body) };
    };
    return { store, runtime, as };
  }

  it('replaces the default rule: anyone reads, only the owner decides (403 decide_not_allowed), lists follow the rule', async () => {
    const asked: string[] = [];
    const { as, store } = await app((caller, session, action) => {
      asked.push(`${caller?.name}:${action}`);
      return action === 'read' || session.owner === caller?.name;
    });
    const id: string = (await as('alice').post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await as('dave').get(`/sessions/${id}`)).status).toBe(200);
    expect((await as('dave').get('/sessions')).body.sessions.map((s: { id: string }) => s.id)).toEqual([id]);
    const refused = await as('dave').post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Mine now.' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'decide_not_allowed', message: expect.stringContaining('may see session') });
    // Nor may they make a link that would decide it for them.
    const link = await as('dave').post(`/sessions/${id}/links`, { recipient: 'dave' });
    expect([link.status, link.body.error?.code]).toEqual([403, 'decide_not_allowed']);
    // AG-UI: a run that would send is refused after reading; one that only reads reports the thread.
    const run = (text?: string) =>
      as('dave').post('/ag-ui/tiny', {
        threadId: id,
        runId: `r-${text ?? 'none'}`,
        state: {},
        messages: text ? [{ id: 'u-dave', role: 'user', content: text }] : [],
        tools: [],
        context: [],
        forwardedProps: {},
      });
    const events = (reply: Reply) =>
      String(reply.body)
        .split('\n\n')
        .filter((block) => block.startsWith('data: '))
        .map((block) => JSON.parse(block.slice('data: '.length)) as { type: string; code?: string });
    expect(events(await run('Mine now.')).map((e) => [e.type, e.code])).toEqual([['RUN_ERROR', 'decide_not_allowed']]);
    expect(events(await run()).map((e) => e.type)).toContain('RUN_FINISHED');
    // A2A: reading the task is allowed, a message to it is not.
    const rpc = (method: string, params: unknown) => as('dave').post('/a2a/tiny', { jsonrpc: '2.0', id: 1, method, params });
    expect((await rpc('tasks/get', { id })).body.result).toMatchObject({ id });
    const message = await rpc('message/send', {
      message: { kind: 'message', messageId: 'm-dave', role: 'user', parts: [{ kind: 'text', text: 'Mine now.' }], taskId: id },
    });
    // The 0.3 binding's error (UnsupportedOperationError) carries the refusal's message.
    expect(message.body.error).toMatchObject({ code: -32004, message: expect.stringContaining('may see session') });
    expect((await store.journal(id)).filter((e) => e.kind === 'event')).toEqual([]);
    expect((await as('alice').post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' })).status).toBe(200);
    expect(asked).toContain('dave:decide');
    expect(asked).toContain('alice:decide');
  });

  it('a rule that refuses reading hides the session as an unknown id, and a list shows only what it allows', async () => {
    const { as, runtime } = await app((caller, session) => session.owner === caller?.name || session.participants.includes(`team:${caller?.groups?.[0]}`));
    for (let i = 0; i < 12; i++) await (await runtime.createSession({ packageId: 'tiny', owner: i % 3 === 0 ? 'dave' : 'alice' })).close();
    const page = await as('dave').get('/sessions?limit=3');
    expect(page.body.sessions).toHaveLength(3);
    let ids = page.body.sessions.map((s: { id: string }) => s.id);
    for (let cursor = page.body.next; cursor;) {
      const next = await as('dave').get(`/sessions?limit=3&cursor=${cursor}`);
      ids = [...ids, ...next.body.sessions.map((s: { id: string }) => s.id)];
      cursor = next.body.next;
    }
    expect(ids).toHaveLength(4);
    const hers = (await as('alice').get('/sessions?limit=1')).body.sessions[0].id;
    const hidden = await as('dave').get(`/sessions/${hers}`);
    const unknown = await as('dave').get('/sessions/s_nobody_has_this');
    expect(shown(hidden, hers)).toEqual(shown(unknown, 's_nobody_has_this'));
  });
});

describe("an app's own authenticate", () => {
  it("carries groups into the default rule; a caller it returns with bad groups is the app's bug (500, logged), not the client's", async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const logs: string[] = [];
    const steward = createServeApp({
      runtime,
      store,
      auth: {
        authenticate: (c) => {
          const user = c.req.header('x-user');
          if (!user) return undefined;
          return { name: user, named: true, actForOthers: false, groups: user === 'broken' ? ['a b'] : [c.req.header('x-team') ?? 'none'] };
        },
      },
      log: (m) => logs.push(m),
    });
    open.push(() => steward.close(0));
    const get = (path: string, user: string, team?: string) => steward.app.request(path, { headers: { 'x-user': user, ...(team ? { 'x-team': team } : {}) } });
    const shared = await runtime.createSession({ packageId: 'tiny', owner: 'ana', participants: ['group:ops'] });
    await shared.close();
    expect((await get(`/sessions/${shared.id}`, 'ben', 'ops')).status).toBe(200);
    expect((await get(`/sessions/${shared.id}`, 'ben', 'qa')).status).toBe(404);
    const broken = await get(`/sessions/${shared.id}`, 'broken');
    expect(broken.status).toBe(500);
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe('internal_error');
    expect(logs.join('\n')).toContain('auth.authenticate returned a caller whose group "a b" must have no control or invisible characters, no spaces');
  });
});

describe("the inspector's page token", () => {
  it('acts as an administrator: the routes it shares with serve list and read every session, and what it creates has no owner', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const ctx = inspectorContext(runtime, store, () => {});
    open.push(async () => ctx.hub.close());
    const api = inspectorApi(ctx, 'inspector-token', () => {});
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await api.request(path, {
        method,
        headers: { 'x-steward-token': 'inspector-token', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const hers = await runtime.createSession({ packageId: 'tiny', owner: 'alice' });
    await hers.close();
    expect((await call('GET', '/sessions')).body.sessions.map((s: { id: string }) => s.id)).toEqual([hers.id]);
    expect((await call('GET', `/sessions/${hers.id}/journal`)).status).toBe(200);
    const made = await call('POST', '/sessions', { packageId: 'tiny' });
    expect(made.status).toBe(201);
    expect(await store.load(made.body.view.id)).toMatchObject({ owner: null, participants: [] });
  });
});

describe('owners and participants of the runtime API', () => {
  it('createSession and forkSession take them, checked (a UserError naming the one that is wrong)', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const session = await runtime.createSession({ packageId: 'tiny', owner: 'ana', participants: ['bo', 'group:ops'] });
    await session.close();
    expect(await store.load(session.id)).toMatchObject({ owner: 'ana', participants: ['bo', 'group:ops'] });
    await expect(runtime.createSession({ packageId: 'tiny', participants: ['ok', ' spaced'] })).rejects.toThrow(
      /createSession: participants\[1\]: a person's name/,
    );
    await expect(runtime.createSession({ packageId: 'tiny', owner: '' })).rejects.toThrow(/createSession: owner must not be empty/);
    await expect(runtime.createSession({ packageId: 'tiny', participants: ['group:a,b'] })).rejects.toThrow(/a group's name must have no/);
    const fork = await runtime.forkSession(session.id, { atSeq: 1, owner: 'bo' });
    await fork.close();
    expect(await store.load(fork.id)).toMatchObject({ owner: 'bo', participants: [] });
  });
});
