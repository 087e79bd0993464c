/**
 * steward/client hands on the server's Retry-After: on the typed error of a session running
 * in another process (a real `steward serve` beside a runtime that holds the session), and on
 * a SendResult that refuses with a come-back code.
 */
import { expect, it } from 'vitest';
import { StewardClient, type FetchLike } from '../../src/client.js';
import { SessionLeasedError } from '../../src/core/errors.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { hanging, runningElsewhere } from '../support/running-elsewhere.js';

const TOKEN = 'retry-after-test-token';

it('a send to a session another process runs throws SessionLeasedError with the server’s Retry-After', async () => {
  const store = new MemoryStore();
  const { session, stop } = await runningElsewhere(store);

  const server = await startServe({ runtime: createRuntime({ model: hanging, store }), store, port: 0, token: TOKEN, log: () => {} });
  try {
    const client = new StewardClient({ baseUrl: server.url, token: TOKEN });
    const error = await client.send(session.id, { type: 'user_submitted_input', text: 'me too' }).catch((e: unknown) => e);
    expect(SessionLeasedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'session_running_elsewhere', sessionId: session.id, retryAfterSeconds: 1 });
  } finally {
    await server.close();
    await stop();
  }
});

it('a refused SendResult carries retryAfterSeconds when the answer had Retry-After, and none when it had not', async () => {
  const view = (await createRuntime({ model: hanging, store: new MemoryStore() }).createSession({ packageId: 'tiny' })).view();
  const answering =
    (code: string, retryAfter: string | null): FetchLike =>
    async () =>
      new Response(JSON.stringify({ ok: false, error: { code, message: 'Not here now.' }, view, revision: 1 }), {
        status: 409,
        headers: { 'content-type': 'application/json', ...(retryAfter !== null ? { 'retry-after': retryAfter } : {}) },
      });
  const send = (fetch: FetchLike) => new StewardClient({ baseUrl: 'http://127.0.0.1:9', fetch }).send(view.id, { type: 'user_approved_next_step' });

  const lost = await send(answering('lease_lost', '1'));
  expect(lost).toMatchObject({ ok: false, error: { code: 'lease_lost', retryAfterSeconds: 1 } });
  const refused = await send(answering('event_refused', null));
  expect(refused.ok).toBe(false);
  expect(refused.ok === false && 'retryAfterSeconds' in refused.error).toBe(false);
  const nonsense = await send(answering('lease_lost', 'soon'));
  expect(nonsense.ok === false && 'retryAfterSeconds' in nonsense.error).toBe(false);
});
