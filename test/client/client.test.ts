/**
 * steward/client against a real `steward serve` on 127.0.0.1 (the demo model, a memory
 * store): every method, its typed errors, and the stream as an async iterable — to `done`,
 * reconnecting with Last-Event-ID after a dropped connection, ended by an AbortSignal.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StewardClient, type FetchLike, type StreamMessage } from '../../src/client.js';
import { InvalidCursorError, RequestError, SessionNotFoundError, StewardError } from '../../src/core/errors.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const TOKEN = 'client-test-token';
let server: ServeHandle;
let client: StewardClient;

beforeEach(async () => {
  const store = new MemoryStore();
  server = await startServe({ runtime: createRuntime({ model: new DemoModel(), store }), store, port: 0, token: TOKEN, log: () => {} });
  client = new StewardClient({ baseUrl: server.url, token: TOKEN });
});
afterEach(async () => {
  await server.close();
});

/** Sends what a person clicking "yes" would, until the session is done. */
async function driveToDone(id: string): Promise<string[]> {
  const states: string[] = [];
  let { view } = await client.get(id);
  for (let i = 0; i < 12 && view.phase !== 'done'; i++) {
    states.push(view.state);
    const event =
      view.waitingReason === 'intake'
        ? ({ type: 'user_submitted_input', text: 'Green tea.' } as const)
        : view.waitingReason === 'approve_step'
          ? ({ type: 'user_approved_next_step' } as const)
          : ({ type: 'user_accepted_artifact', artifactId: view.artifact!.id } as const);
    const result = await client.send(id, event);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    view = result.view;
  }
  states.push(view.state);
  return states;
}

it('creates, gets, lists a page at a time, sends to done and reads the journal, typed and checked', async () => {
  const created = await client.create({ packageId: 'tiny' });
  expect(created.view).toMatchObject({ packageId: 'tiny', state: 'waiting_user.intake', enabledEvents: ['user_submitted_input'] });
  const other = await client.create({ packageId: 'tiny' });
  const first = await client.list({ limit: 1 });
  expect(first.sessions).toHaveLength(1);
  expect(first.next).not.toBeNull();
  const second = await client.list({ limit: 1, after: first.next });
  expect([first.sessions[0]!.id, second.sessions[0]!.id].sort()).toEqual([created.view.id, other.view.id].sort());

  const states = await driveToDone(created.view.id);
  expect([states[0], states.at(-1)]).toEqual(['waiting_user.intake', 'done']);
  expect(states).toContain('waiting_user.review_artifact');
  const { view, revision } = await client.get(created.view.id);
  expect(view.phase).toBe('done');
  expect(revision).toBeGreaterThan(0);
  const journal = await client.journal(created.view.id, { limit: 2 });
  expect(journal.entries.map((e) => e.kind)).toEqual(['created', 'event']);
  expect(journal.next).toBe(journal.entries[1]!.seq);
  const rest = await client.journal(created.view.id, { after: journal.next! });
  expect(rest.entries[0]!.seq).toBe(journal.next! + 1);
  expect(rest.entries.at(-1)!.state).toBe('done');
});

it('answers a refused event with the SendResult, as session.send() does, and fails with the typed errors of the server', async () => {
  const { view } = await client.create({ packageId: 'tiny' });
  const refused = await client.send(view.id, { type: 'user_confirmed_intake' });
  expect(refused).toMatchObject({ ok: false, error: { code: 'event_refused' }, view: { state: 'waiting_user.intake' } });

  const missing = await client.get('s-nobody').catch((e: unknown) => e);
  expect(SessionNotFoundError.isInstance(missing) && missing.sessionId).toBe('s-nobody');
  expect((missing as Error).message).toContain('GET /sessions');

  const wrongToken = await new StewardClient({ baseUrl: server.url, token: 'nope' }).get(view.id).catch((e: unknown) => e);
  expect(RequestError.isInstance(wrongToken) && [wrongToken.code, wrongToken.status]).toEqual(['unauthorized', 401]);

  const badCursor = await client.list({ after: 'garbled' }).catch((e: unknown) => e);
  expect(RequestError.isInstance(badCursor) && badCursor.code).toBe('invalid_request');
  expect((badCursor as RequestError).issues.map((i) => i.path)).toEqual(['cursor']);
  expect(InvalidCursorError.isInstance(badCursor)).toBe(false);

  const nobody = await new StewardClient({ baseUrl: 'http://127.0.0.1:9', token: TOKEN }).get(view.id).catch((e: unknown) => e);
  expect(RequestError.isInstance(nobody) && [nobody.code, nobody.status]).toEqual(['network_error', 0]);

  // A malformed event never leaves the page: zod's error, before any request.
  await expect(client.send(view.id, { type: 'user_submitted_input', text: '' })).rejects.toThrow(/must not be empty/);

  // An answer that is not the API is a typed bad_response, not a wrong field later.
  const liar: FetchLike = async () => new Response(JSON.stringify({ view: { id: 1 } }), { status: 200, headers: { 'content-type': 'application/json' } });
  const bad = await new StewardClient({ baseUrl: server.url, fetch: liar }).get(view.id).catch((e: unknown) => e);
  expect(StewardError.isInstance(bad) && bad.code).toBe('bad_response');
});

it('sends asynchronously with Prefer: respond-async and an Idempotency-Key; a 202 is Accepted', async () => {
  const { view } = await client.create({ packageId: 'tiny' });
  const seen: Headers[] = [];
  const recording: FetchLike = async (input, init) => {
    seen.push(new Headers(init.headers));
    return fetch(input, init);
  };
  const recorded = new StewardClient({ baseUrl: server.url, token: TOKEN, fetch: recording });
  await recorded.send(view.id, { type: 'user_submitted_input', text: 'Green tea.' }, { wait: false, idempotencyKey: 'k-1' });
  expect(seen[0]!.get('prefer')).toBe('respond-async');
  expect(seen[0]!.get('idempotency-key')).toBe('k-1');
  expect(seen[0]!.get('authorization')).toBe(`Bearer ${TOKEN}`);

  const accepting: FetchLike = async () =>
    new Response(JSON.stringify({ accepted: true, sessionId: view.id, revision: 3 }), { status: 202, headers: { 'content-type': 'application/json' } });
  const answer = await new StewardClient({ baseUrl: server.url, fetch: accepting }).send(view.id, { type: 'user_approved_next_step' }, { wait: false });
  expect(answer).toEqual({ ok: true, accepted: true, sessionId: view.id, revision: 3 });
});

it('streams the journal and the live events to done, as an async iterable with the bearer header', async () => {
  const { view } = await client.create({ packageId: 'tiny' });
  const messages: StreamMessage[] = [];
  const reading = (async () => {
    for await (const message of client.stream(view.id)) messages.push(message);
  })();
  await driveToDone(view.id);
  await reading;
  expect(messages[0]).toEqual({ type: 'hello', sessionId: view.id });
  expect(messages.at(-1)).toEqual({ type: 'done' });
  const entries = messages.flatMap((m) => (m.type === 'entry' ? [m.entry.seq] : []));
  expect(entries).toEqual(entries.map((_, i) => i + 1));
  expect(messages.some((m) => m.type === 'session' && m.event.type === 'artifact_published')).toBe(true);
});

it('reconnects a dropped stream with Last-Event-ID after a backoff, and misses no entry', async () => {
  const { view } = await client.create({ packageId: 'tiny' });
  await client.send(view.id, { type: 'user_submitted_input', text: 'Green tea.' });
  const opened: (string | null)[] = [];
  // The first connection breaks after its first journal entry, as a proxy or a network would.
  const flaky: FetchLike = async (input, init) => {
    opened.push(new Headers(init.headers).get('last-event-id'));
    const response = await fetch(input, init);
    if (opened.length > 1) return response;
    const reader = response.body!.getReader();
    let text = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        text += new TextDecoder().decode(value);
        controller.enqueue(value);
        if (text.includes('event: entry')) {
          await reader.cancel();
          controller.error(new TypeError('network connection lost'));
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const messages: StreamMessage[] = [];
  const reading = (async () => {
    for await (const message of new StewardClient({ baseUrl: server.url, token: TOKEN, fetch: flaky, reconnect: { initialDelayMs: 10 } }).stream(view.id))
      messages.push(message);
  })();
  await driveToDone(view.id);
  await reading;
  expect(opened[0]).toBeNull();
  const beforeDrop = messages.slice(
    0,
    messages.findIndex((m, i) => i > 0 && m.type === 'hello'),
  );
  // Ids are opaque (a journal seq, or more once live events have ids): the reconnect sends back the last one seen.
  const lastSeen = beforeDrop.findLast((m) => (m.type === 'entry' || m.type === 'session') && m.id !== undefined);
  expect(lastSeen).toBeDefined();
  expect(opened[1]).toBe(lastSeen && 'id' in lastSeen ? lastSeen.id : 'no id before the drop');
  const entries = messages.flatMap((m) => (m.type === 'entry' ? [m.entry.seq] : []));
  expect(entries).toEqual(entries.map((_, i) => i + 1));
  expect(messages.filter((m) => m.type === 'hello')).toHaveLength(2);
  expect(messages.at(-1)).toEqual({ type: 'done' });
});

it('ends the iteration when its signal aborts, and refuses a stream the server refuses', async () => {
  const { view } = await client.create({ packageId: 'tiny' });
  const stop = new AbortController();
  const seen: string[] = [];
  for await (const message of client.stream(view.id, { signal: stop.signal })) {
    seen.push(message.type);
    if (message.type === 'entry') stop.abort();
  }
  expect(seen).toEqual(['hello', 'entry']);
  const missing = await (async () => {
    for await (const _ of client.stream('s-nobody')) return 'got a message';
  })().catch((e: unknown) => e);
  expect(SessionNotFoundError.isInstance(missing)).toBe(true);
});

it('answer(view, event) names the wait the view shows: a second tab with the same view gets a harmless repeat, another decision gets wait_closed (409), nothing applied twice', async () => {
  const { view } = await client.create({ packageId: 'short-story' });
  const asked = await client.answer(view, { type: 'user_submitted_input', text: 'A lighthouse story.' });
  expect(asked).toMatchObject({ ok: true, view: { waitingReason: 'approve_step' } });
  const shown = asked.view;
  expect(shown.wait).toBe((view.wait ?? 0) + 1);
  // Two tabs showed the same approval: the first rejects it, the second sends the same rejection.
  const first = await client.answer(shown, { type: 'user_rejected_next_step', reason: 'Not this one.' });
  expect(first).toMatchObject({ ok: true });
  const second = await client.answer(shown, { type: 'user_rejected_next_step', reason: 'Not this one.' });
  expect(second).toMatchObject({ ok: true, repeated: true });
  // A third tab approves what it was shown: refused, naming the wait open now.
  const third = await client.answer(shown, { type: 'user_approved_next_step' });
  expect(third).toMatchObject({ ok: false, error: { code: 'wait_closed' } });
  expect(third.ok ? '' : third.error.message).toContain(`Wait ${shown.wait} is no longer open`);
  const journal = await client.journal(shown.id);
  expect(journal.entries.filter((e) => e.type === 'user_rejected_next_step')).toHaveLength(2);
  expect(journal.entries.filter((e) => e.type === 'user_approved_next_step')).toHaveLength(1);
  expect((await client.get(shown.id)).view.rejections.filter((r) => r.code === 'wait_closed')).toHaveLength(2);
});
