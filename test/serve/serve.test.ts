/**
 * `steward serve` over real HTTP on 127.0.0.1 (startServe in this process, fetch as the
 * client): a story to done on the demo model, the bearer token, 400s that say what is wrong,
 * 409 for refused events, the OpenAPI document, the journal, the event stream, shutdown.
 */
import type { NamedToken } from '../../src/http/tokens.js';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model, ModelReply } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { SessionView } from '../../src/core/view.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { userEventTypes } from '../../src/core/machines/session.events.js';
import { client, FIRST_REQUEST_MILESTONES, milestones, nextEvent, readEvents } from './http.js';

const TOKEN = 'test-token-0123456789abcdef';
const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serveOn(
  options: { model?: Model; token?: string; tokens?: NamedToken[]; maxBodyBytes?: number; graceMs?: number; maxCreatesPerMinute?: number } = {},
) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: options.model ?? new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {}, ...options });
  open.push(server);
  return { server, store, http: client(server.url, options.token) };
}

describe('steward serve', () => {
  it('drives the short story from intake to done over HTTP, journal gapless', async () => {
    const { http, server } = await serveOn();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const created = await http.post('/sessions', { packageId: 'short-story' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ revision: 1, view: { state: 'waiting_user.intake', packageId: 'short-story' } });
    const id: string = created.body.view.id;

    let view: SessionView = created.body.view;
    let sends = 0;
    while (view.phase !== 'done') {
      const sent = await http.post(`/sessions/${id}/events`, nextEvent(view, 'A lighthouse keeper'));
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body.ok).toBe(true);
      view = sent.body.view;
      expect(++sends).toBeLessThan(30);
    }
    expect(view.state).toBe('done');
    expect(view.artifacts.map((a) => a.workerId)).toEqual(['brief-writer', 'outliner', 'drafter', 'critic']);

    const got = await http.get(`/sessions/${id}`);
    expect(got.body).toMatchObject({ view: { state: 'done' }, revision: expect.any(Number) });
    const journal = await http.get(`/sessions/${id}/journal`);
    const seqs = journal.body.entries.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
    expect(journal.body.entries.at(-1).state).toBe('done');
    expect(journal.body.next).toBeNull();
    const page = await http.get(`/sessions/${id}/journal?after=2&limit=3`);
    expect(page.body.entries.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5]);
    expect(page.body.next).toBe(5);

    const list = await http.get('/sessions');
    expect(list.body).toEqual({ next: null, sessions: [expect.objectContaining({ id, state: 'done' })] });
  });

  it('pages GET /sessions with limit and cursor (the `next` of the page before); offset is refused, naming cursor', async () => {
    const { http, store } = await serveOn();
    for (let i = 0; i < 5; i++) expect((await http.post('/sessions', {})).status).toBe(201);
    const all = (await store.list()).sessions.map((s) => s.id);
    expect(all).toHaveLength(5);

    const first = await http.get('/sessions?limit=2');
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['next', 'sessions']); // no total: it would read every session
    expect(first.body.sessions.map((s: { id: string }) => s.id)).toEqual(all.slice(0, 2));
    const second = await http.get(`/sessions?limit=2&cursor=${encodeURIComponent(first.body.next)}`);
    expect(second.body.sessions.map((s: { id: string }) => s.id)).toEqual(all.slice(2, 4));
    const last = await http.get(`/sessions?limit=2&cursor=${encodeURIComponent(second.body.next)}`);
    expect(last.body).toMatchObject({ next: null, sessions: [{ id: all[4], state: 'waiting_user.skill_selection' }] });

    const offset = await http.get('/sessions?limit=2&offset=2');
    expect(offset.status).toBe(400);
    expect(offset.body.error.message).toMatch(/`offset` is not supported: page with `cursor`, the `next` of the previous page/);
    const badCursor = await http.get('/sessions?cursor=not-a-cursor');
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error).toMatchObject({ code: 'invalid_request', issues: [{ path: 'cursor' }] });
    expect(badCursor.body.error.message).toMatch(/pass the `next` of the previous page unchanged/);
    expect((await http.get(`/sessions?cursor=${'a'.repeat(5000)}`)).status).toBe(400);
  });

  it('limits session creation per caller: past the limit a 429 with Retry-After (seconds) and a JSON error naming the setting', async () => {
    const { http, store } = await serveOn({ token: TOKEN, maxCreatesPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await http.post('/sessions', {})).status).toBe(201);
    const refused = await http.post('/sessions', {});
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 20).toBe(true);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.body.error.message).toMatch(/3 per minute per caller.*Retry in \d+ s.*--max-creates-per-minute/);
    expect((await store.list()).sessions).toHaveLength(3);
    // Only creation is limited: the sessions stay readable.
    expect((await http.get('/sessions')).status).toBe(200);
  });

  it('counts a caller by its verified token: another spelling of the header buys nothing, each named token has its own allowance', async () => {
    const { server } = await serveOn({ token: TOKEN, maxCreatesPerMinute: 2 });
    const create = (authorization: string) =>
      fetch(`${server.url}/sessions`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{}' });
    expect((await create(`Bearer ${TOKEN}`)).status).toBe(201);
    expect((await create(`Bearer ${TOKEN}`)).status).toBe(201);
    for (const spelling of [`bearer ${TOKEN}`, `BEARER ${TOKEN}`, `Bearer  ${TOKEN}`, `BeArer   ${TOKEN}`])
      expect((await create(spelling)).status, spelling).toBe(429);

    const alice = 'alice-token-0123456789abcdef';
    const bob = 'bob-token-0123456789abcdefgh';
    const named = await serveOn({
      tokens: [
        { name: 'alice', token: alice, actForOthers: false },
        { name: 'bob', token: bob, actForOthers: false },
      ],
      maxCreatesPerMinute: 1,
    });
    expect((await client(named.server.url, alice).post('/sessions', {})).status).toBe(201);
    expect((await client(named.server.url, alice).post('/sessions', {})).status).toBe(429);
    expect((await client(named.server.url, bob).post('/sessions', {})).status).toBe(201);
  });

  it('without a token every caller counts as one: another Authorization header buys no new allowance; 0 turns the limit off', async () => {
    const { server } = await serveOn({ maxCreatesPerMinute: 2 });
    const anonymous = client(server.url);
    expect((await anonymous.post('/sessions', {})).status).toBe(201);
    expect((await anonymous.post('/sessions', {})).status).toBe(201);
    expect((await client(server.url, 'made-up-token-0123456789').post('/sessions', {})).status).toBe(429);

    const unlimited = await serveOn({ maxCreatesPerMinute: 0 });
    for (let i = 0; i < 5; i++) expect((await unlimited.http.post('/sessions', {})).status).toBe(201);
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    await expect(startServe({ runtime, store, port: 0, maxCreatesPerMinute: -1 })).rejects.toThrow(/maxCreatesPerMinute must be a whole number ≥ 0/);
  });

  it('refuses a session id in the path that breaks the id rule with a 400 naming the rule', async () => {
    const { http } = await serveOn();
    for (const path of ['/sessions/%00', `/sessions/${'x'.repeat(201)}`, '/sessions/a%1Bb/journal', '/sessions/a%E2%80%AEb/stream']) {
      const refused = await http.get(path);
      expect(refused.status, path).toBe(400);
      expect(refused.body.error.message).toMatch(/1 to 200 characters, none of them a control or invisible character/);
    }
    expect((await http.get(`/sessions/${'x'.repeat(200)}`)).status).toBe(404);
  });

  it('refuses requests without the right bearer token (401, JSON), but not /healthz and /openapi.json', async () => {
    const { server } = await serveOn({ token: TOKEN });
    const anonymous = client(server.url);
    const none = await anonymous.get('/sessions');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('Authorization: Bearer <STEWARD_TOKEN>') } });
    const wrong = await client(server.url, 'not-the-token-at-all').post('/sessions', {});
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toMatch(/Wrong token/);
    const malformed = await anonymous.get('/sessions', { authorization: 'Basic abc' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('unauthorized');
    expect((await anonymous.get('/healthz')).status).toBe(200);
    expect((await anonymous.get('/openapi.json')).status).toBe(200);
    expect((await client(server.url, TOKEN).get('/sessions')).status).toBe(200);
  });

  it('will not listen beyond loopback without a token, nor with a short one', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    await expect(startServe({ runtime, store, host: '0.0.0.0', port: 0 })).rejects.toThrow(UserError);
    await expect(startServe({ runtime, store, host: '0.0.0.0', port: 0 })).rejects.toThrow(/set STEWARD_TOKEN/);
    await expect(startServe({ runtime, store, port: 0, token: 'short' })).rejects.toThrow(/at least 16 characters/);
  });

  it('answers 400 with what is wrong for bad bodies, events and queries; 413 past the size limit', async () => {
    const { http } = await serveOn({ maxBodyBytes: 2048 });
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;

    const unknownType = await http.post(`/sessions/${id}/events`, { type: 'user_did_something' });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error.code).toBe('invalid_request');
    expect(unknownType.body.error.message).toMatch(/^Invalid event: type: /);
    expect(unknownType.body.error.issues[0].path).toBe('type');

    const missingField = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input' });
    expect(missingField.status).toBe(400);
    expect(missingField.body.error.issues).toEqual([{ path: 'text', message: expect.any(String) }]);
    const extraField = await http.post(`/sessions/${id}/events`, { type: 'user_confirmed_intake', sneaky: true });
    expect(extraField.status).toBe(400);
    expect(extraField.body.error.message).toMatch(/sneaky/);

    const notJson = await http.post(`/sessions/${id}/events`, '{type: oops');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toMatch(/^The body is not valid JSON/);
    const empty = await http.post(`/sessions/${id}/events`, '');
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/needs a JSON body/);

    const badCreate = await http.post('/sessions', { packageId: 'tiny', maxBurst: 0 });
    expect(badCreate.status).toBe(400);
    expect(badCreate.body.error.issues[0].path).toBe('maxBurst');
    const unknownPackage = await http.post('/sessions', { packageId: 'nope' });
    expect(unknownPackage.status).toBe(400);
    expect(unknownPackage.body.error.message).toMatch(/Unknown package "nope"/);

    const badQuery = await http.get(`/sessions/${id}/journal?limit=abc`);
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.message).toMatch(/limit: must be a whole number from 1 to 1000/);
    const unknownQuery = await http.get('/sessions?page=2');
    expect(unknownQuery.status).toBe(400);
    expect(unknownQuery.body.error.message).toMatch(/page/);

    const huge = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'x'.repeat(4096) });
    expect(huge.status).toBe(413);
    expect(huge.body.error).toEqual({ code: 'body_too_large', message: 'The body is larger than 2048 bytes, the limit of this server.' });

    // None of it reached the session.
    expect((await http.get(`/sessions/${id}/journal`)).body.entries).toHaveLength(1);
  });

  it('answers 409 with the structured refusal for an event the state does not accept, and changes nothing', async () => {
    const { http } = await serveOn();
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const refused = await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      ok: false,
      error: { code: 'event_refused', message: expect.stringContaining('"user_approved_next_step" is not accepted while the session waits in intake') },
      view: { state: 'waiting_user.intake' },
    });
    expect((await http.get(`/sessions/${id}`)).body.view.state).toBe('waiting_user.intake');
  });

  it('answers 404 for an unknown session or route', async () => {
    const { http } = await serveOn();
    for (const reply of [
      await http.get('/sessions/nope'),
      await http.post('/sessions/nope/events', { type: 'user_confirmed_intake' }),
      await http.get('/sessions/nope/journal'),
      await http.get('/sessions/nope/stream'),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('session_not_found');
    }
    const route = await http.get('/nowhere');
    expect(route.status).toBe(404);
    expect(route.body.error.message).toMatch(/GET \/openapi\.json/);
  });

  it('serves an OpenAPI 3.1 document generated from the zod schemas', async () => {
    const { http } = await serveOn({ token: TOKEN });
    const doc = (await http.get('/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/a2a/{packageId}',
      '/a2a/{packageId}/.well-known/agent-card.json',
      '/ag-ui/{packageId}',
      '/ag-ui/{packageId}/capabilities',
      '/healthz',
      '/links/{token}',
      '/mcp',
      '/openapi.json',
      '/sessions',
      '/sessions/{id}',
      '/sessions/{id}/audit',
      '/sessions/{id}/events',
      '/sessions/{id}/fork',
      '/sessions/{id}/journal',
      '/sessions/{id}/links',
      '/sessions/{id}/stream',
      '/sessions/{id}/stream-tickets',
    ]);
    const send = doc.paths['/sessions/{id}/events'].post;
    const events = send.requestBody.content['application/json'].schema.oneOf;
    // A literal is a one-value enum in the generator's JSON Schema.
    expect(events.map((e: { properties: { type: { enum: [string] } } }) => e.properties.type.enum[0]).sort()).toEqual([...userEventTypes].sort());
    expect(send.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '409']));
    // A 400 is { error } from the body check, or a SendResult from the session's check of the event.
    const badRequest = send.responses['400'].content['application/json'].schema.anyOf;
    expect(badRequest.map((s: { required: string[] }) => [...s.required].sort())).toEqual([['error'], ['error', 'ok', 'revision', 'view']]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    // The browser-facing parts: async send, the stream's ticket and resume header, tickets, fork.
    expect(send.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'query:wait',
      'header:Prefer',
      'header:X-Steward-User',
      'header:Idempotency-Key',
    ]);
    expect(send.responses['202'].headers['Preference-Applied']).toBeDefined();
    const streamDoc = doc.paths['/sessions/{id}/stream'].get;
    expect(streamDoc.security).toEqual([{ bearer: [] }, { streamTicket: [] }]);
    expect(streamDoc.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'query:after',
      'query:ticket',
      'header:Last-Event-ID',
    ]);
    expect(Object.keys(doc.paths['/sessions/{id}/stream-tickets'].post.responses)).toContain('201');
    expect(Object.keys(doc.paths['/sessions/{id}/fork'].post.requestBody.content['application/json'].schema.properties).sort()).toEqual([
      'atSeq',
      'id',
      'participants',
    ]);
    const journalParams = doc.paths['/sessions/{id}/journal'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(journalParams).toEqual(['path:id', 'query:after', 'query:limit']);
    const list = doc.paths['/sessions'].get;
    expect(list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['query:limit', 'query:cursor']);
    expect(Object.keys(list.responses['200'].content['application/json'].schema.properties).sort()).toEqual(['next', 'sessions']);
    expect(Object.keys(doc.paths['/sessions'].post.responses)).toContain('429');
    const agUi = doc.paths['/ag-ui/{packageId}'].post;
    expect(agUi.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['threadId', 'runId', 'messages']));
    expect(Object.keys(agUi.responses['200'].content)).toEqual(['text/event-stream']);
  });

  it('streams the journal as Server-Sent Events, resumes after Last-Event-ID, and ends with done', async () => {
    const { http, server } = await serveOn();
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const res = await fetch(`${server.url}/sessions/${id}/stream`);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const sse = await readEvents(res);
    await expect.poll(() => sse.events.filter((e) => e.event === 'entry').length).toBe(1);
    let view: SessionView = (await http.get(`/sessions/${id}`)).body.view;
    while (view.phase !== 'done') view = (await http.post(`/sessions/${id}/events`, nextEvent(view, 'Hello'))).body.view;
    await expect.poll(() => sse.events.at(-1)?.event, { timeout: 5000 }).toBe('done');
    const entries = sse.events.filter((e) => e.event === 'entry');
    const journal = (await http.get(`/sessions/${id}/journal`)).body.entries;
    expect(entries.map((e) => e.data)).toEqual(journal);
    // Ids are opaque; this server's start with the seq (the live events' part follows).
    expect(entries.map((e) => e.id!.split('.')[0])).toEqual(journal.map((e: { seq: number }) => String(e.seq)));
    await sse.stop();

    const again = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers: { 'last-event-id': String(journal.length - 2) } }));
    await expect.poll(() => again.events.at(-1)?.event).toBe('done');
    expect(again.events.filter((e) => e.event === 'entry').map((e) => e.data.seq)).toEqual([journal.length - 1, journal.length]);
    await again.stop();

    // Caught up on a finished session: done at once, not an endless wait.
    const caughtUp = await readEvents(await fetch(`${server.url}/sessions/${id}/stream?after=${journal.length}`));
    await expect.poll(() => caughtUp.events.map((e) => e.event)).toEqual(['hello', 'done']);
    await caughtUp.stop();
  });

  it('the stream carries the live library events of a session this server runs (a store without an event bus: in process)', async () => {
    const { http, server } = await serveOn();
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const sse = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`));
    await expect.poll(() => sse.events.some((e) => e.event === 'entry')).toBe(true);
    let view: SessionView = (await http.get(`/sessions/${id}`)).body.view;
    view = (await http.post(`/sessions/${id}/events`, nextEvent(view, 'Hello'))).body.view;
    expect(view.waitingReason).toBe('approve_step');
    await expect
      .poll(() => milestones(sse.events.filter((e) => e.event === 'session').map((e) => e.data.type)), { timeout: 5000 })
      .toEqual(FIRST_REQUEST_MILESTONES);
    const waiting = sse.events.find((e) => e.data?.type === 'waiting')!;
    expect(waiting.data).toMatchObject({ sessionId: id, reason: 'approve_step', state: 'waiting_user.approve_step' });
    await sse.stop();
  });

  it('a send that settles within the grace period is answered normally during shutdown; new work is refused', async () => {
    const demo = new DemoModel();
    let calls = 0;
    const slow: Model = {
      label: 'slow demo',
      complete: async (req) => {
        calls += 1;
        await new Promise((r) => setTimeout(r, 300));
        return demo.complete(req);
      },
    };
    const { http, server } = await serveOn({ model: slow, graceMs: 10_000 });
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const sending = http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    await expect.poll(() => calls).toBe(1);
    const closing = server.close();
    await expect.poll(() => server.host.isDraining).toBe(true);
    await expect(server.host.create({ packageId: 'tiny' })).rejects.toMatchObject({ status: 503, code: 'server_stopping' });
    await expect(server.host.send(id, { type: 'user_confirmed_intake' })).rejects.toMatchObject({ status: 503, code: 'server_stopping' });
    const answer = await sending;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, view: { phase: 'waiting_user' } });
    expect(await closing).toEqual({ settled: 1, handedBack: [] });
  });

  it('says the store is unreachable: /healthz 503, other routes 503 store_unavailable, no password', async () => {
    const { PostgresStore } = await import('../../src/store/postgres-store.js');
    const { closedPort } = await import('../support/temp.js');
    const store = new PostgresStore(`postgres://app:pw-secret-1@127.0.0.1:${await closedPort()}/steward`);
    const runtime = createRuntime({ model: new DemoModel(), store });
    const server = await startServe({ runtime, store, port: 0, log: () => {}, storeLabel: store.target });
    open.push(server);
    const http = client(server.url);
    const health = await http.get('/healthz');
    expect(health.status).toBe(503);
    // Public: the kind of store only, never its URL.
    expect(health.body).toEqual({ ok: false, store: 'postgres', draining: false, storeBusy: false });
    const list = await http.get('/sessions');
    expect(list.status).toBe(503);
    expect(list.body.error.code).toBe('store_unavailable');
    // Where the database is stays in the server's log: the client learns that it is unreachable.
    expect(list.body.error.message).toMatch(/database is unreachable/);
    expect(JSON.stringify([health.body, list.body])).not.toMatch(/pw-secret-1|127\.0\.0\.1|steward/);
    await store.close();
  });

  it('a store failing mid-stream ends the stream with a structured error event', async () => {
    const { http, server, store } = await serveOn();
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const { StoreUnavailableError } = await import('../../src/core/errors.js');
    store.journal = async () => {
      throw new StoreUnavailableError(
        'unreachable',
        'postgres://app@db/steward',
        'Cannot reach the PostgreSQL server at postgres://app@db/steward (ECONNREFUSED).',
      );
    };
    const sse = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`));
    await expect.poll(() => sse.events.map((e) => e.event)).toEqual(['hello', 'error']);
    expect(sse.events[1]!.data).toEqual({ error: { code: 'store_unavailable', message: expect.stringContaining('database is unreachable') } });
    await sse.stop();
  });

  it('shuts down gracefully: new work is refused, a send under way past the grace period is handed back saved', async () => {
    let calls = 0;
    const never: Model = {
      label: 'never answers',
      complete: () =>
        new Promise<ModelReply>(() => {
          calls += 1;
        }),
    };
    const { http, server, store } = await serveOn({ model: never, graceMs: 200 });
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const sending = http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    await expect.poll(() => calls).toBe(1);
    expect(server.host.busy).toBe(1);

    const report = await server.close();
    expect(report).toEqual({ settled: 0, handedBack: [id] });
    const answer = await sending;
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ ok: false, error: { code: 'session_stopped' } });
    // Saved where it was: the interrupted call runs again when the session is resumed.
    expect((await store.journal(id)).at(-1)?.state).toBe('running.manager.thinking');
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});
