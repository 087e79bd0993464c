/**
 * What a web page needs of `steward serve`, over real HTTP on 127.0.0.1: CORS for the
 * listed origins only, stream tickets, the live events (text deltas too) with ids and the
 * current run replayed to a late or reconnecting stream, async send, fork, and the routes
 * mounted in an app's own hono server with its own auth.
 */
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { Model } from '../../src/core/models/model.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { startServe, type ServeOptions } from '../../src/serve/server.js';
import { createServeApp } from '../../src/serve.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StreamTickets } from '../../src/http/stream-tickets.js';
import { client, FIRST_REQUEST_MILESTONES, milestones, readEvents } from './http.js';
import { heldDemo, streamingDemo } from './browser-models.js';

const TOKEN = 'browser-token-0123456789abcdef';
const PAGE = 'http://127.0.0.1:5173';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serveOn(options: Partial<ServeOptions> & { model?: Model } = {}) {
  const store = options.store ?? new MemoryStore();
  const runtime = createRuntime({ model: options.model ?? streamingDemo(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {}, token: TOKEN, ...options });
  cleanups.push(() => server.close());
  return { server, store, http: client(server.url, TOKEN) };
}

async function newSession(http: ReturnType<typeof client>): Promise<string> {
  const created = await http.post('/sessions', { packageId: 'tiny' });
  expect(created.status).toBe(201);
  return created.body.view.id;
}

const sessionEvents = (events: Array<{ event: string; id?: string; data: any }>) => events.filter((e) => e.event === 'session');

describe('CORS', () => {
  it('answers the preflight of a listed origin (204, its origin back, methods, headers, max age; no credentials)', async () => {
    const { server } = await serveOn({ corsOrigins: [PAGE] });
    const res = await fetch(`${server.url}/sessions`, {
      method: 'OPTIONS',
      headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, prefer' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(res.headers.get('vary')).toMatch(/origin/i);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,DELETE,OPTIONS');
    expect(res.headers.get('access-control-allow-headers')!.split(',')).toEqual(
      // MCP's Streamable HTTP headers too: a page that is an MCP host calls /mcp.
      expect.arrayContaining([
        'authorization',
        'content-type',
        'last-event-id',
        'prefer',
        'idempotency-key',
        'x-steward-user',
        'mcp-protocol-version',
        'mcp-session-id',
      ]),
    );
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets a listed origin read answers, errors included, and expose Retry-After / Preference-Applied', async () => {
    const { server } = await serveOn({ corsOrigins: [PAGE] });
    const ok = await fetch(`${server.url}/sessions`, { headers: { origin: PAGE, authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(ok.headers.get('access-control-expose-headers')).toBe('retry-after,preference-applied,mcp-session-id');
    const refused = await fetch(`${server.url}/sessions`, { headers: { origin: PAGE } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect((await refused.json()).error.code).toBe('unauthorized');
  });

  it('refuses every other origin, preflight included (403 forbidden_origin); none is listed by default', async () => {
    const listed = await serveOn({ corsOrigins: [PAGE] });
    const plain = await serveOn();
    for (const [url, origin] of [
      [listed.server.url, 'http://127.0.0.1:5174'],
      [plain.server.url, PAGE],
    ] as const) {
      const preflight = await fetch(`${url}/sessions`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(403);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect((await preflight.json()).error.code).toBe('forbidden_origin');
    }
  });
});

describe('stream tickets', () => {
  it("open the one session's stream without the Authorization header, and nothing else", async () => {
    const { server, http } = await serveOn();
    const id = await newSession(http);
    const other = await newSession(http);
    expect((await fetch(`${server.url}/sessions/${id}/stream-tickets`, { method: 'POST' })).status).toBe(401);
    const issued = await http.post(`/sessions/${id}/stream-tickets`, {});
    expect(issued.status).toBe(201);
    expect(issued.body).toEqual({ ticket: expect.any(String), sessionId: id, expiresAt: expect.any(String) });
    const lifetime = Date.parse(issued.body.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(0);
    expect(lifetime).toBeLessThanOrEqual(60_000);
    const ticket = encodeURIComponent(issued.body.ticket);

    const sse = await readEvents(await fetch(`${server.url}/sessions/${id}/stream?ticket=${ticket}`));
    await expect.poll(() => sse.events.map((e) => e.event).slice(0, 2)).toEqual(['hello', 'entry']);
    await sse.stop();

    const elsewhere = await fetch(`${server.url}/sessions/${other}/stream?ticket=${ticket}`);
    expect(elsewhere.status).toBe(401);
    expect((await elsewhere.json()).error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining("another session's stream") });
    for (const path of [`/sessions/${id}?ticket=${ticket}`, `/sessions/${id}/journal?ticket=${ticket}`, `/sessions?ticket=${ticket}`])
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(401);
    const forged = `${issued.body.ticket.split('.')[0]}.${'A'.repeat(43)}`;
    expect((await fetch(`${server.url}/sessions/${id}/stream?ticket=${encodeURIComponent(forged)}`)).status).toBe(401);
  });

  it('a ticket one server issued opens the stream on another with the same token (one store)', async () => {
    const store = new MemoryStore();
    const a = await serveOn({ store });
    const b = await serveOn({ store });
    const id = await newSession(a.http);
    const { ticket } = (await a.http.post(`/sessions/${id}/stream-tickets`)).body;
    const sse = await readEvents(await fetch(`${b.server.url}/sessions/${id}/stream?ticket=${encodeURIComponent(ticket)}`));
    await expect.poll(() => sse.events[0]?.event).toBe('hello');
    await sse.stop();
    const otherToken = await serveOn({ store, token: 'another-token-0123456789abcdef' });
    expect((await fetch(`${otherToken.server.url}/sessions/${id}/stream?ticket=${encodeURIComponent(ticket)}`)).status).toBe(401);
  });

  it('expire after 60 s and carry the caller', () => {
    let now = 1_000_000;
    const tickets = StreamTickets.forTokens({ kind: 'named', tokens: [{ name: 'alice', token: TOKEN, actForOthers: false }] }, { now: () => now });
    const alice = { name: 'alice', actForOthers: false, named: true };
    const { ticket, expiresAt } = tickets.issue('s-1', alice);
    expect(expiresAt).toBe(new Date(1_060_000).toISOString());
    expect(tickets.verify(ticket, 's-1')).toEqual(alice);
    now = 1_059_999;
    expect(tickets.verify(ticket, 's-1')).toEqual(alice);
    now = 1_060_000;
    expect(() => tickets.verify(ticket, 's-1')).toThrow(/expired/);
  });
});

describe('live events on the stream', () => {
  it('carries text deltas and every live event with an id while a stream follows; a late stream gets the current run again, in order', async () => {
    const { server, http } = await serveOn();
    const id = await newSession(http);
    const headers = { authorization: `Bearer ${TOKEN}` };
    // A stream open before the send: the run's model calls stream.
    const follower = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers }));
    await expect.poll(() => follower.events.some((e) => e.event === 'hello')).toBe(true);
    const sent = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    expect(sent.body.view.waitingReason).toBe('approve_step');
    await follower.stop();
    // Opened only now: the run is over, its live events come from the replay buffer.
    const late = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers }));
    await expect.poll(() => sessionEvents(late.events).some((e) => e.data.type === 'waiting')).toBe(true);
    const live = sessionEvents(late.events);
    // The order of what happened; the deltas (pieces of text and tool calls) are checked by what they join to.
    expect(milestones(live.map((e) => e.data.type))).toEqual(FIRST_REQUEST_MILESTONES);
    expect(
      live
        .filter((e) => e.data.type === 'text_delta')
        .map((e) => e.data.text)
        .join(''),
    ).toMatch(/^Thinking….*Reading the request\.Thinking…/); // the test model's own piece, then the demo model's streamed text, per round
    expect(live.some((e) => e.data.type === 'tool_call_delta')).toBe(true);
    expect(live.every((e) => typeof e.id === 'string')).toBe(true);
    expect(new Set(live.map((e) => e.id)).size).toBe(live.length);
    await late.stop();
  });

  it('a run nobody follows does not stream: the model is called without deltas, a late stream gets every other event', async () => {
    const streamed: boolean[] = [];
    const demo = streamingDemo();
    const model: Model = {
      label: 'records whether each call streams',
      complete: (request) => {
        streamed.push(request.onTextDelta !== undefined || request.onToolCallDelta !== undefined);
        return demo.complete(request);
      },
    };
    const { server, http } = await serveOn({ model });
    const id = await newSession(http);
    const sent = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    expect(sent.body.view.waitingReason).toBe('approve_step');
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.every((s) => !s)).toBe(true);
    const late = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    await expect.poll(() => sessionEvents(late.events).some((e) => e.data.type === 'waiting')).toBe(true);
    const types = sessionEvents(late.events).map((e) => e.data.type);
    expect(milestones(types)).toEqual(FIRST_REQUEST_MILESTONES);
    expect(types.filter((t) => t === 'text_delta' || t === 'tool_call_delta')).toEqual([]);
    await late.stop();
    // Followed now (the stream just closed, and follows outlast it a while): the next run streams.
    streamed.length = 0;
    await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.every((s) => s)).toBe(true);
  });

  it('a send answered at once (Prefer: respond-async) streams its run for the stream opened after it', async () => {
    const { server, http } = await serveOn();
    const id = await newSession(http);
    const sent = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' }, { prefer: 'respond-async' });
    expect(sent.status).toBe(202);
    const late = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    await expect.poll(() => sessionEvents(late.events).some((e) => e.data.type === 'waiting')).toBe(true);
    const live = sessionEvents(late.events);
    expect(live.filter((e) => e.data.type === 'text_delta').length).toBeGreaterThan(0);
    expect(live.some((e) => e.data.type === 'tool_call_delta')).toBe(true);
    await late.stop();
  });

  it('resumes after Last-Event-ID: the live events after it, none twice; the next run replaces the buffer', async () => {
    const { server, http } = await serveOn();
    const id = await newSession(http);
    await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const first = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers }));
    await expect.poll(() => sessionEvents(first.events).some((e) => e.data.type === 'waiting')).toBe(true);
    await first.stop();
    const all = sessionEvents(first.events);
    const cut = all.findIndex((e) => e.data.type === 'tool_call_checked');
    const again = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers: { ...headers, 'last-event-id': all[cut]!.id! } }));
    await expect.poll(() => sessionEvents(again.events).some((e) => e.data.type === 'waiting')).toBe(true);
    await again.stop();
    expect(sessionEvents(again.events).map((e) => e.data)).toEqual(all.slice(cut + 1).map((e) => e.data));
    // The journal resumes from the id too: the entries not yet sent when that event was.
    const entriesAfter = (events: typeof all) => events.filter((e) => e.event === 'entry').map((e) => e.data.seq);
    expect(entriesAfter(again.events)).toEqual(entriesAfter(first.events.slice(first.events.indexOf(all[cut]!))));

    // The next run: a stream resuming in the old run gets the new run's events only.
    await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
    const next = await readEvents(await fetch(`${server.url}/sessions/${id}/stream`, { headers: { ...headers, 'last-event-id': all.at(-1)!.id! } }));
    await expect.poll(() => sessionEvents(next.events).some((e) => e.data.type === 'waiting')).toBe(true);
    await next.stop();
    const nextTypes = sessionEvents(next.events).map((e) => e.data.type);
    expect(nextTypes.filter((t) => t === 'waiting')).toHaveLength(1);
    expect(nextTypes).toContain('round_started');
    const oldIds = new Set(all.map((e) => e.id));
    expect(sessionEvents(next.events).some((e) => oldIds.has(e.id))).toBe(false);
  });

  it('refuses a Last-Event-ID that is no id of the stream (400)', async () => {
    const { server, http } = await serveOn();
    const id = await newSession(http);
    const res = await fetch(`${server.url}/sessions/${id}/stream`, { headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': '3.NOPE.x' } });
    expect(res.status).toBe(400);
  });
});

describe('async send', () => {
  for (const [how, path, headers] of [
    ['Prefer: respond-async', '', { prefer: 'respond-async' }],
    ['?wait=false', '?wait=false', {}],
  ] as const) {
    it(`${how}: 202 with the revision while the run goes on; the stream and GET tell the rest`, async () => {
      const held = heldDemo();
      const { http } = await serveOn({ model: held.model });
      const id = await newSession(http);
      const answer = await http.post(`/sessions/${id}/events${path}`, { type: 'user_submitted_input', text: 'Hello' }, headers);
      expect(answer.status).toBe(202);
      expect(answer.body).toEqual({ accepted: true, sessionId: id, revision: expect.any(Number) });
      expect(answer.body.revision).toBeGreaterThan(1);
      expect(answer.headers.get('preference-applied')).toBe('respond-async');
      expect((await http.get(`/sessions/${id}`)).body.view.phase).toBe('running');
      held.release();
      await expect.poll(async () => (await http.get(`/sessions/${id}`)).body.view.waitingReason).toBe('approve_step');
    });
  }

  it('a refused event still answers 409 with the SendResult; without the preference: 200 once it waits', async () => {
    const { http } = await serveOn({ model: new DemoModel() });
    const id = await newSession(http);
    const refused = await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' }, { prefer: 'respond-async' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ ok: false, error: { code: 'event_refused' } });
    const sync = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    expect(sync.status).toBe(200);
    expect(sync.body).toMatchObject({ ok: true, view: { waitingReason: 'approve_step' } });
    expect(sync.headers.get('preference-applied')).toBeNull();
  });
});

describe('POST /sessions/{id}/fork', () => {
  it('forks after a journal entry (default: the last), 201 with the new view; bad atSeq 400, unknown 404', async () => {
    const { http } = await serveOn({ model: new DemoModel() });
    const id = await newSession(http);
    await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    const journal = (await http.get(`/sessions/${id}/journal`)).body.entries;
    const at = await http.post(`/sessions/${id}/fork`, { atSeq: 1, id: 'my-fork' });
    expect(at.status, JSON.stringify(at.body)).toBe(201);
    expect(at.body).toMatchObject({ view: { id: 'my-fork', state: 'waiting_user.intake', forkedFrom: { id, seq: 1 } }, revision: expect.any(Number) });
    const last = await http.post(`/sessions/${id}/fork`);
    expect(last.status).toBe(201);
    expect(last.body.view).toMatchObject({ state: journal.at(-1).state, forkedFrom: { id, seq: journal.at(-1).seq } });
    expect((await http.post(`/sessions/${id}/fork`, { atSeq: 999 })).status).toBe(400);
    expect((await http.post(`/sessions/${id}/fork`, { atSeq: 0 })).status).toBe(400);
    expect((await http.post(`/sessions/nope/fork`, {})).status).toBe(404);
    expect((await http.post(`/sessions/${id}/fork`, { atSeq: 1, id: 'my-fork' })).status).toBe(409);
  });
});

describe('createServeApp: the routes inside an app of its own', () => {
  async function appOn(auth: Parameters<typeof createServeApp>[0]['auth']) {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: streamingDemo(), store });
    const steward = createServeApp({ runtime, store, auth, log: () => {} });
    const app = new Hono();
    app.get('/', (c) => c.text('my app'));
    app.route('/steward', steward.app);
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server)) as Server;
    });
    cleanups.push(async () => {
      await steward.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("mounts under a prefix beside the app's routes, authenticating with the app's own check; tickets and public routes work there", async () => {
    const base = await appOn({ authenticate: (c) => (c.req.header('x-user') === 'alice' ? { name: 'alice', named: true, actForOthers: false } : undefined) });
    expect(await (await fetch(`${base}/`)).text()).toBe('my app');
    expect((await fetch(`${base}/steward/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/steward/sessions`)).status).toBe(401);
    const alice = client(`${base}/steward`, undefined);
    const created = await alice.post('/sessions', { packageId: 'tiny' }, { 'x-user': 'alice' });
    expect(created.status).toBe(201);
    const id = created.body.view.id;
    const sent = await alice.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' }, { 'x-user': 'alice' });
    expect(sent.status).toBe(200);
    const journal = (await alice.get(`/sessions/${id}/journal`, { 'x-user': 'alice' })).body.entries;
    expect(journal.find((e: { kind: string }) => e.kind === 'event').payload.by).toBe('alice');
    const { ticket } = (await alice.post(`/sessions/${id}/stream-tickets`, {}, { 'x-user': 'alice' })).body;
    const sse = await readEvents(await fetch(`${base}/steward/sessions/${id}/stream?ticket=${encodeURIComponent(ticket)}`));
    await expect.poll(() => sessionEvents(sse.events).some((e) => e.data.type === 'waiting')).toBe(true);
    await sse.stop();
  });

  it("auth 'none' leaves the check to the app's middleware", async () => {
    const base = await appOn('none');
    expect((await fetch(`${base}/steward/sessions`)).status).toBe(200);
  });
});
