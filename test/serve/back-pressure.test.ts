/**
 * `--max-running`: a server that runs as many sessions as it may answers a send for one
 * more with 429 and Retry-After at once (nothing sent, nothing journalled), instead of
 * queueing it behind the model calls under way; a send for a session it already runs, and
 * any send once one settled, goes through.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { client } from './http.js';
import { heldDemo } from './browser-models.js';

const TOKEN = 'back-pressure-token-of-24+';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('steward serve --max-running', () => {
  it('answers 429 with Retry-After for one session more than it may run, and takes it once one settled', async () => {
    const store = new MemoryStore();
    const held = heldDemo();
    const runtime = createRuntime({ model: held.model, store });
    const server = await startServe({ runtime, store, port: 0, log: () => {}, token: TOKEN, maxRunning: 1 });
    cleanups.push(() => server.close());
    const http = client(server.url, TOKEN);
    const [a, b] = await Promise.all([http.post('/sessions', { packageId: 'tiny' }), http.post('/sessions', { packageId: 'tiny' })]);
    const input = { type: 'user_submitted_input', text: 'A note, please.' };

    // A runs (its model call is held): the server is full.
    const first = http.post(`/sessions/${a.body.view.id}/events`, input);
    await expect.poll(() => held.calls()).toBe(1);
    const refused = await http.post(`/sessions/${b.body.view.id}/events`, input);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error).toMatchObject({ code: 'server_busy' });
    expect(refused.body.error.message).toMatch(/--max-running/);
    expect((await store.journal(b.body.view.id)).filter((e) => e.kind === 'event')).toHaveLength(0);

    held.release();
    expect((await first).status).toBe(200);
    await expect.poll(() => server.host.busy).toBe(0);
    const taken = await http.post(`/sessions/${b.body.view.id}/events`, input);
    expect(taken.status).toBe(200);
    expect(taken.body.view.waitingReason).toBe('approve_step');
  });

  it('refuses a limit that is not a whole number', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: heldDemo().model, store });
    await expect(startServe({ runtime, store, port: 0, log: () => {}, maxRunning: -1 })).rejects.toThrow(/maxRunning must be a whole number/);
  });
});
