/**
 * Memory under many watchers: the live events kept for replay are bounded for all sessions
 * together (`maxReplayBytes`, `--max-replay-mb`), however many sessions are followed and
 * however long their replies; and one caller holds at most `maxStreamsPerCaller` open streams
 * (session streams, AG-UI runs, A2A streams) — the next is a 429 naming the limit and its
 * flag — while other callers are not affected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle, type ServeOptions } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { client, readEvents } from './http.js';

const ANA = 'token-of-ana-0123456789';
const BOB = 'token-of-bob-0123456789';
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** A manager that writes a long reply in large pieces (when someone follows the session), then asks the user. */
const chatty = (pieces: number): Model => ({
  label: 'chatty',
  complete: async (request: ModelRequest): Promise<ModelReply> => {
    for (let i = 0; i < pieces; i++) request.onTextDelta?.(`${i} ${'x'.repeat(990)}`);
    return { content: 'Which way should it go?', toolCalls: [] };
  },
});

async function serveOn(model: Model, options: Partial<ServeOptions> = {}): Promise<ServeHandle> {
  const store = new MemoryStore();
  const runtime = createRuntime({ model, store });
  const server = await startServe({
    runtime,
    store,
    port: 0,
    tokens: [
      { name: 'ana', token: ANA, actForOthers: false },
      { name: 'bob', token: BOB, actForOthers: false },
    ],
    log: () => {},
    ...options,
  });
  open.push(() => server.close());
  return server;
}

/** Opens a session's event stream as `token`'s caller; resolves once it said hello (or with its refusal). */
async function openStream(server: ServeHandle, id: string, token: string) {
  const res = await fetch(`${server.url}/sessions/${id}/stream`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } }, stop: async () => {} };
  const sse = await readEvents(res);
  open.push(sse.stop);
  await expect.poll(() => sse.events.length).toBeGreaterThan(0);
  return { status: 200, body: undefined, stop: sse.stop };
}

describe('memory under many watchers', () => {
  it('keeps the live events of many followed sessions with long replies within the replay budget', { timeout: 60_000 }, async () => {
    const budget = 2_000_000;
    const server = await serveOn(chatty(1_500), { maxReplayBytes: budget });
    const ana = client(server.url, ANA);
    let most = 0;
    for (let i = 0; i < 8; i++) {
      const id: string = (await ana.post('/sessions', { packageId: 'tiny' })).body.view.id;
      // A stream open on the session: its model call streams, and its records are kept for replay.
      expect((await openStream(server, id, ANA)).status).toBe(200);
      const sent = await ana.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A long story, please.' });
      expect(sent.body.ok).toBe(true);
      most = Math.max(most, server.host.replayBytes);
      expect(server.host.replayBytes).toBeLessThanOrEqual(budget);
    }
    // Each reply alone filled a session's own bound (1 MB): eight of them would hold four times the budget.
    expect(most).toBeGreaterThan(budget / 2);
    // A stream that opens late on the newest session still gets its run's events.
    const last = (await ana.get('/sessions?limit=1')).body.sessions[0].id as string;
    const late = await fetch(`${server.url}/sessions/${last}/stream`, { headers: { authorization: `Bearer ${ANA}` } });
    const replayed = await readEvents(late);
    open.push(replayed.stop);
    await expect.poll(() => replayed.events.filter((e) => e.event === 'session' && e.data.type === 'text_delta').length).toBeGreaterThan(100);
  });

  it("refuses a caller's stream past --max-streams-per-caller (429 naming it; RUN_ERROR on AG-UI; a JSON-RPC error on A2A); other callers are not affected", async () => {
    const server = await serveOn(chatty(1), { maxStreamsPerCaller: 2 });
    const ana = client(server.url, ANA);
    // Bob takes part in it: his streams of it are his own (src/http/access.ts).
    const id: string = (await ana.post('/sessions', { packageId: 'tiny', participants: ['bob'] })).body.view.id;
    const first = await openStream(server, id, ANA);
    expect(first.status).toBe(200);
    expect((await openStream(server, id, ANA)).status).toBe(200);

    const third = await openStream(server, id, ANA);
    expect(third.status).toBe(429);
    expect(third.body?.error).toMatchObject({
      code: 'too_many_streams',
      message: expect.stringMatching(/"ana" holds 2 open streams.*--max-streams-per-caller/),
    });

    const run = await fetch(`${server.url}/ag-ui/tiny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: id, runId: 'r1', messages: [], tools: [], context: [], state: {}, forwardedProps: {} }),
    });
    const events = (await run.text())
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
    expect(events).toEqual([{ type: 'RUN_ERROR', code: 'too_many_streams', message: expect.stringContaining('--max-streams-per-caller') }]);

    const rpc = await fetch(`${server.url}/a2a/tiny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANA}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SubscribeToTask', params: { id } }),
    });
    expect(rpc.status).toBe(429);
    const answer = (await rpc.json()) as { id: number; error: { message: string; data?: Array<{ metadata?: Record<string, string> }> } };
    expect(answer).toMatchObject({ id: 7, error: { message: expect.stringContaining('--max-streams-per-caller') } });
    expect(answer.error.data?.[0]?.metadata).toMatchObject({ code: 'too_many_streams' });

    // Another caller has streams of its own; a plain request of this one still answers.
    expect((await openStream(server, id, BOB)).status).toBe(200);
    expect((await ana.get(`/sessions/${id}`)).status).toBe(200);

    // A stream closed gives its place back.
    await first.stop();
    await expect.poll(async () => (await openStream(server, id, ANA)).status).toBe(200);
  });

  it('refuses a bad limit naming the option', async () => {
    await expect(serveOn(chatty(1), { maxStreamsPerCaller: -1 })).rejects.toThrow(/maxStreamsPerCaller must be a whole number ≥ 0/);
    await expect(serveOn(chatty(1), { maxReplayBytes: 0 })).rejects.toThrow(/maxReplayBytes must be a whole number of bytes/);
  });
});
