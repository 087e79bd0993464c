import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, type Model } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { buildPage } from './page-build.js';

let pageDir = '';
beforeAll(async () => {
  pageDir = await buildPage();
}, 60_000);

const open: InspectorHandle[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function setup(model: Model = new DemoModel()) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model, store });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const inspector = await startInspector({ runtime, store, port: 0, sessionId: session.id, pageDir, log: () => {} });
  open.push(inspector);
  const base = new URL(inspector.url).origin;
  const api = async (method: string, path: string, body?: unknown, token: string | null = inspector.token) => {
    const res = await fetch(`${base}/api${path}`, {
      method,
      headers: { ...(token !== null ? { 'x-steward-token': token } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { store, runtime, session, inspector, base, api };
}

describe('the local inspector server', () => {
  it('listens on 127.0.0.1 with a random token in its URL', async () => {
    const { inspector, session } = await setup();
    const url = new URL(inspector.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.searchParams.get('token')).toMatch(/^[0-9a-f]{48}$/);
    expect(url.searchParams.get('session')).toBe(session.id);
  });

  it('refuses every API request without the right token (403), reads and writes alike', async () => {
    const { api, session, store } = await setup();
    const before = (await store.load(session.id))!.revision;
    expect((await api('GET', '/info', undefined, null)).status).toBe(403);
    expect((await api('GET', `/sessions/${session.id}`, undefined, 'wrong')).status).toBe(403);
    const post = await api('POST', `/sessions/${session.id}/events`, { type: 'user_submitted_input', text: 'sneaky' }, null);
    expect(post.status).toBe(403);
    expect(post.body.error.message).toMatch(/token/);
    expect((await api('POST', '/sessions', { packageId: 'tiny' }, null)).status).toBe(403);
    expect((await store.load(session.id))!.revision).toBe(before);
    expect(session.view().state).toBe('waiting_user.intake');
    expect((await api('GET', '/info')).status).toBe(200);
  });

  it('refuses a request for another Host name (DNS rebinding)', async () => {
    const { base } = await setup();
    const { port } = new URL(base);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', headers: { host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('answers other attacks with the same guards: size, traversal, unknown routes, methods, listen address', async () => {
    const { base, api, session, inspector } = await setup();
    const { port } = new URL(base);
    /** A raw request (fetch would normalise the path). */
    const raw = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    // A body over 1 MB is refused before it is parsed (declared or streamed), and the session
    // is untouched. The server answers 413 at once; a client still sending may see the
    // connection close before it reads the answer.
    const huge = JSON.stringify({ type: 'user_submitted_input', text: 'x'.repeat(1_100_000) });
    const events = `/api/sessions/${session.id}/events`;
    const declaredOrStreamed: Record<string, string>[] = [{ 'content-length': String(huge.length) }, { 'transfer-encoding': 'chunked' }];
    for (const headers of declaredOrStreamed) {
      const big = await raw('POST', events, { 'x-steward-token': inspector.token, 'content-type': 'application/json', ...headers }, huge).catch(
        (error: Error) => ({ status: 0, type: '', text: error.message }),
      );
      if (big.status !== 0) {
        expect(big.status).toBe(413);
        expect(JSON.parse(big.text)).toEqual({
          error: { code: 'body_too_large', message: 'The body is larger than 1000000 bytes, the limit of this server.' },
        });
      } else {
        expect(big.text).toMatch(/socket hang up|ECONNRESET|EPIPE/);
      }
    }
    expect(session.view().state).toBe('waiting_user.intake');
    expect(session.view().rejections).toEqual([]);
    expect((await api('POST', `/sessions/${session.id}/events`, { type: 'user_confirmed_intake' })).body).toMatchObject({
      ok: false,
      error: { code: 'event_refused' },
    });
    // No file outside the page folder, however the path is spelt.
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json', '/..\\package.json', '//etc/passwd']) {
      const res = await raw('GET', path);
      expect(res.text, path).not.toContain('"name": "steward"');
      expect(res.text, path).not.toContain('root:');
    }
    // Unknown API routes are JSON 404s, behind the token like every API path.
    expect((await api('GET', '/nothing-here')).status).toBe(404);
    expect((await api('GET', '/nothing-here', undefined, null)).status).toBe(403);
    expect((await raw('GET', '/api')).status).toBe(403);
    expect((await raw('DELETE', '/')).status).toBe(405);
    // The stream is SSE, behind the token too.
    expect((await raw('GET', '/api/stream')).status).toBe(403);
    // Any address but a loopback one is refused before listening.
    const store = new MemoryStore();
    await expect(startInspector({ runtime: createRuntime({ model: new DemoModel(), store }), store, host: '0.0.0.0', port: 0, pageDir })).rejects.toThrow(
      /this machine only/,
    );
  });

  it('serves the page without the token (the page itself carries no data)', async () => {
    const { base } = await setup();
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('Steward inspector');
  });

  it('says clearly when the page was not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'steward-no-page-'));
    try {
      const store = new MemoryStore();
      const runtime = createRuntime({ model: new DemoModel(), store });
      await expect(startInspector({ runtime, store, port: 0, pageDir: empty })).rejects.toThrow(/not built .*run "npm run build"/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('sends events: a refused one answers with the refusal message and changes nothing; the journal says they came through the inspector', async () => {
    const { api, session, store } = await setup();
    const refused = await api('POST', `/sessions/${session.id}/events`, { type: 'user_confirmed_intake' });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ ok: false, error: { code: 'event_refused', message: expect.stringMatching(/no request to confirm yet/) } });
    const accepted = await api('POST', `/sessions/${session.id}/events`, { type: 'user_submitted_input', text: 'Tea.' });
    expect(accepted.body).toMatchObject({ ok: true, settled: true, view: { state: 'waiting_user.approve_step' } });
    const info = await api('GET', `/sessions/${session.id}`);
    expect(info.body).toMatchObject({ live: true, view: { state: 'waiting_user.approve_step', burst: 2 } });
    const malformed = await api('POST', `/sessions/${session.id}/events`, { type: 'user_rejected_next_step', reason: 3 });
    expect(malformed.body).toMatchObject({ ok: false, error: { code: 'invalid_event' } });
    // Whatever surface the page names, the event came through the inspector.
    await api('POST', `/sessions/${session.id}/events`, { type: 'user_approved_next_step', through: 'rest' });
    const taken = (await store.journal(session.id)).filter((e) => e.type === 'user_submitted_input' || e.type === 'user_approved_next_step');
    expect(taken.map((e) => (e.payload as { through?: string }).through)).toEqual(['inspector', 'inspector']);
  });

  it('answers "still running" while the model takes its time, and streams the change when it settles', async () => {
    let release: (() => void) | null = null;
    const slow: Model = {
      label: 'slow',
      complete: (req) =>
        new Promise((resolve) => {
          release = () =>
            resolve({
              content: null,
              toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ask_user', arguments: JSON.stringify({ message: `hello ${req.agent}` }) } }],
            });
        }),
    };
    const { api, session, base, inspector } = await setup(slow);
    const stream = await fetch(`${base}/api/stream?token=${inspector.token}&session=${session.id}`);
    const reader = stream.body!.getReader();
    const seen: string[] = [];
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        seen.push(new TextDecoder().decode(value));
      }
    })();
    const sent = await api('POST', `/sessions/${session.id}/events`, { type: 'user_submitted_input', text: 'Tea.' });
    expect(sent.body).toMatchObject({ ok: true, settled: false, view: { state: 'running.manager.thinking' } });
    release!();
    await expect.poll(async () => (await api('GET', `/sessions/${session.id}`)).body.view.state).toBe('waiting_user.intake');
    await expect.poll(() => seen.join('')).toMatch(/event: session\ndata: \{"id":"/);
    await reader.cancel();
    await reading.catch(() => {});
  });

  it('a session another process is running is not resumed behind its back (409), unless asked', async () => {
    const store = new MemoryStore();
    const never: Model = { label: 'never', complete: () => new Promise(() => {}) };
    const other = createRuntime({ model: never, store }); // "the CLI in another process"
    const elsewhere = await other.createSession({ packageId: 'tiny' });
    void elsewhere.send({ type: 'user_submitted_input', text: 'busy' });
    await expect.poll(async () => (await store.list()).sessions[0]?.state).toBe('running.manager.thinking');

    const runtime = createRuntime({ model: new DemoModel(), store });
    const inspector = await startInspector({ runtime, store, port: 0, pageDir, log: () => {} });
    open.push(inspector);
    const headers = { 'x-steward-token': inspector.token, 'content-type': 'application/json' };
    const base = new URL(inspector.url).origin;
    const view = (await (await fetch(`${base}/api/sessions/${elsewhere.id}`, { headers })).json()) as Record<string, any>;
    expect(view).toMatchObject({ live: false, view: { state: 'running.manager.thinking' } });
    const res = await fetch(`${base}/api/sessions/${elsewhere.id}/events`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: 'user_confirmed_intake' }),
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as Record<string, any>).error.message).toMatch(/running .* another process/);
    expect(runtime.live.has(elsewhere.id)).toBe(false);
    elsewhere.stop();
  });

  it('creates a session from the body steward serve takes (its schema), and refuses a malformed one', async () => {
    const { api, store } = await setup();
    const before = (await store.list()).sessions.length;
    const bad = await api('POST', '/sessions', { packageId: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: { code: 'invalid_request', message: expect.stringContaining('packageId'), issues: [expect.objectContaining({ path: 'packageId' })] },
    });
    expect((await store.list()).sessions).toHaveLength(before);
    const made = await api('POST', '/sessions', { packageId: 'tiny', maxBurst: 3 });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ view: { packageId: 'tiny', maxBurst: 3 } });
  });

  it('time travel: /at/:seq rebuilds an earlier state', async () => {
    const { api, session } = await setup();
    await session.send({ type: 'user_submitted_input', text: 'Tea.' });
    const at1 = await api('GET', `/sessions/${session.id}/at/1`);
    expect(at1.body).toMatchObject({
      seq: 1,
      state: 'waiting_user.intake',
      recordedState: 'waiting_user.intake',
      view: { acceptedEvents: expect.arrayContaining(['user_submitted_input']) },
    });
    const journal = await api('GET', `/sessions/${session.id}/journal?after=1`);
    expect(journal.body.entries[0].seq).toBe(2);
  });

  it("mounts steward serve's routes for the list, a new session and the journal: their shapes, pages and errors", async () => {
    const { api, session, runtime } = await setup();
    await session.send({ type: 'user_submitted_input', text: 'Tea.' });
    // The journal, a page at a time, as serve answers it.
    const page = await api('GET', `/sessions/${session.id}/journal?after=1&limit=1`);
    expect(page.body).toEqual({ entries: [expect.objectContaining({ seq: 2 })], next: 2 });
    // The list, paged; serve's query schema refuses what it does not know.
    const other = await runtime.createSession({ packageId: 'tiny' });
    const first = await api('GET', '/sessions?limit=1');
    expect(first.body).toEqual({ sessions: [expect.objectContaining({ id: expect.any(String) })], next: expect.any(String) });
    const bad = await api('GET', '/sessions?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', issues: [expect.objectContaining({ path: 'limit' })] });
    // Which sessions run here is the inspector's own question.
    const created = await api('POST', '/sessions', { packageId: 'tiny' });
    expect(created.status).toBe(201);
    const live = (await api('GET', '/live')).body as { ids: string[] };
    expect(live.ids).toEqual(expect.arrayContaining([session.id, other.id]));
    // serve's create lets the new session go (its first send resumes it here): it does not run here yet.
    expect(live.ids).not.toContain(created.body.view.id);
    // A session id in the path passes serve's id rule.
    const badId = await api('GET', `/sessions/${encodeURIComponent('x\u0007')}/journal`);
    expect(badId.status).toBe(400);
  });
});
