/**
 * Webhooks in one process: a session's waits, answers and end become outbox messages with the
 * journal entries that caused them; the deliverer posts them signed (checked by the
 * `standardwebhooks` library in the receiver), retries with the same webhook-id on a fake clock,
 * and keeps a dead letter after the last try. No timers: the test drives `deliverDue()`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.js';
import { MAX_WEBHOOK_BYTES, webhookBody } from '../../src/webhooks/payload.js';
import type { SessionView } from '../../src/core/view.js';
import { startReceiver, TEST_SECRET } from './receiver.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const finishes = () => new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] }]);

async function setup(answer?: Parameters<typeof startReceiver>[0], events?: ('session.waiting' | 'session.answered' | 'session.done')[]) {
  const receiver = await startReceiver(answer);
  closers.push(receiver.close);
  const store = new MemoryStore();
  const receivers = [{ url: receiver.url, secret: TEST_SECRET, ...(events ? { events } : {}) }];
  const runtime = createRuntime({ model: finishes(), store, webhooks: receivers });
  let now = 1_000_000;
  const clock = { now: () => now, advance: (ms: number) => (now += ms) };
  const deliverer = new WebhookDeliverer({ outbox: store.outbox, receivers, now: clock.now, random: () => 1 - Number.EPSILON, schedule: [1000, 2000] });
  return { receiver, store, runtime, deliverer, clock };
}

describe('webhooks', () => {
  it('a new wait, its answer and the end are posted, signed as Standard Webhooks says, with the wait and the view', async () => {
    const { receiver, store, runtime, deliverer } = await setup();
    const session = await runtime.createSession({ packageId: 'tiny' });
    // The first wait is written with the session's first entry.
    expect(await store.outbox.counts()).toEqual({ pending: 1, dead: 0 });
    const result = await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
    expect(result.ok && result.view.state).toBe('done');
    expect(await deliverer.deliverDue()).toBe(3);

    expect(receiver.received.map((r) => r.verified)).toEqual([true, true, true]);
    expect(receiver.received.map((r) => r.body.type)).toEqual(['session.waiting', 'session.answered', 'session.done']);
    const [waiting, answered, done] = receiver.received.map((r) => r.body);
    expect(waiting!.data).toMatchObject({
      sessionId: session.id,
      event: { type: 'waiting', reason: 'intake', wait: 1 },
      wait: { wait: 1, waitingReason: 'intake' },
      view: { id: session.id, state: 'waiting_user.intake' },
    });
    expect(answered!.data).toMatchObject({ event: { type: 'decision', reason: 'intake', wait: 1, eventType: 'user_submitted_input' } });
    expect(done!.data).toMatchObject({ event: { type: 'done', summary: 'Done.' }, wait: null, view: { state: 'done' } });
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(3);
    expect(receiver.received[0]!.id).toMatch(/^msg_/);
    // Acknowledged: nothing left to send.
    expect(await store.outbox.counts()).toEqual({ pending: 0, dead: 0 });
    expect(await deliverer.deliverDue()).toBe(0);
  });

  it('a receiver that fails twice is tried again on the schedule, with the same webhook-id, and then has it once', async () => {
    const { receiver, store, runtime, deliverer, clock } = await setup((n) => (n <= 2 ? 500 : 200), ['session.waiting']);
    await runtime.createSession({ packageId: 'tiny' });
    expect(await deliverer.deliverDue()).toBe(1);
    // Not due before its backoff (full jitter up to 1000 ms; random() is just under 1 here).
    clock.advance(998);
    expect(await deliverer.deliverDue()).toBe(0);
    clock.advance(2);
    expect(await deliverer.deliverDue()).toBe(1);
    clock.advance(2000);
    expect(await deliverer.deliverDue()).toBe(1);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(await store.outbox.counts()).toEqual({ pending: 0, dead: 0 });
  });

  it('after the last try the message is a dead letter, listed with why, until it is retried', async () => {
    let failing = true;
    const { receiver, store, runtime, deliverer, clock } = await setup(() => (failing ? 503 : 204), ['session.waiting']);
    const session = await runtime.createSession({ packageId: 'tiny' });
    for (const wait of [0, 1000, 2000]) {
      clock.advance(wait);
      expect(await deliverer.deliverDue()).toBe(1);
    }
    expect(await store.outbox.counts()).toEqual({ pending: 0, dead: 1 });
    const [dead] = await store.outbox.deadLetters(10);
    expect(dead).toMatchObject({ sessionId: session.id, type: 'session.waiting', attempts: 3, lastError: 'HTTP 503', status: 'dead' });
    clock.advance(100_000);
    expect(await deliverer.deliverDue()).toBe(0);

    failing = false;
    expect(await store.outbox.retryDead(dead!.id, clock.now())).toBe(1);
    expect(await deliverer.deliverDue()).toBe(1);
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set([dead!.id]));
    expect(await store.outbox.counts()).toEqual({ pending: 0, dead: 0 });
  });

  it('a message signed with another secret than the receiver holds fails its verification', async () => {
    const { receiver } = await setup();
    const store = new MemoryStore();
    const otherSecret = `whsec_${Buffer.from('another secret, thirty-two bytes').toString('base64')}`;
    const receivers = [{ url: receiver.url, secret: otherSecret }];
    const runtime = createRuntime({ model: finishes(), store, webhooks: receivers });
    await runtime.createSession({ packageId: 'tiny' });
    await new WebhookDeliverer({ outbox: store.outbox, receivers }).deliverDue();
    expect(receiver.received.map((r) => r.verified)).toEqual([false]);
  });

  it('a failed model call is session.failed, with the failure in the view of the wait that follows', async () => {
    const receiver = await startReceiver();
    closers.push(receiver.close);
    const store = new MemoryStore();
    const receivers = [{ url: receiver.url, secret: TEST_SECRET, events: ['session.failed' as const] }];
    const down = { label: 'down', complete: async () => Promise.reject(new Error('The model is down.')) };
    const session = await createRuntime({ model: down, store, webhooks: receivers }).createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
    await new WebhookDeliverer({ outbox: store.outbox, receivers }).deliverDue();
    expect(receiver.received.map((r) => r.body.type)).toEqual(['session.failed']);
    expect(receiver.received[0]!.body.data).toMatchObject({
      event: { type: 'round_finished', outcome: 'failed', agent: 'manager', error: 'The model is down.' },
      wait: { waitingReason: 'input' },
    });
    expect(String((receiver.received[0]!.body.data.view as SessionView).notice)).toContain('The model is down.');
  });

  it('a refused event leaves the wait open: the chart announces it again, and nothing fires', async () => {
    const { store, runtime } = await setup();
    const session = await runtime.createSession({ packageId: 'tiny' });
    const refused = await session.send({ type: 'user_approved_next_step' });
    expect(refused.ok).toBe(false);
    expect(await store.outbox.counts()).toEqual({ pending: 1, dead: 0 });
  });

  it('a body over the bound keeps the wait and the view summary, and says it was cut', () => {
    const view = {
      id: 's1',
      state: 'waiting_user.review_artifact',
      phase: 'waiting_user',
      waitingReason: 'review_artifact',
      wait: 3,
      message: 'x'.repeat(MAX_WEBHOOK_BYTES),
    };
    const body = webhookBody('session.waiting', { type: 'waiting', wait: 3 }, view as unknown as SessionView, '2026-01-01T00:00:00.000Z');
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(MAX_WEBHOOK_BYTES);
    expect(body.data).toEqual({
      sessionId: 's1',
      event: { type: 'waiting', wait: 3 },
      wait: { wait: 3, waitingReason: 'review_artifact' },
      view: { id: 's1', state: 'waiting_user.review_artifact', phase: 'waiting_user', waitingReason: 'review_artifact', wait: 3 },
      truncated: true,
    });
  });

  it('webhooks need a store (messages are written with journal entries) and a secret in the Standard Webhooks form', () => {
    expect(() => createRuntime({ model: finishes(), webhooks: [{ url: 'http://127.0.0.1:9/h', secret: TEST_SECRET }] })).toThrow(/webhooks need a store/);
    expect(() => createRuntime({ model: finishes(), store: new MemoryStore(), webhooks: [{ url: 'http://127.0.0.1:9/h', secret: 'hunter2' }] })).toThrow(
      /secret must be a Standard Webhooks secret/,
    );
    try {
      createRuntime({ model: finishes(), store: new MemoryStore(), webhooks: [{ url: 'http://127.0.0.1:9/h', secret: 'hunter2' }] });
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });

  it('a receiver that holds its request delays no other receiver', async () => {
    const slow = await startReceiver(() => 'hold');
    const fast = await startReceiver(() => 204);
    closers.push(slow.close, fast.close);
    const store = new MemoryStore();
    const receivers = [slow, fast].map((r) => ({ url: r.url, secret: TEST_SECRET }));
    const runtime = createRuntime({ model: finishes(), store, webhooks: receivers });
    const deliverer = new WebhookDeliverer({ outbox: store.outbox, receivers, requestTimeoutMs: 600_000 });
    await deliverer.start();
    closers.push(() => deliverer.stop());
    const session = await runtime.createSession({ packageId: 'tiny' });
    await slow.until(1);
    await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
    // The slow receiver holds every request it got, unanswered; the fast one has the wait, the answer and the end meanwhile.
    await fast.until(3);
    expect(fast.received.map((r) => r.body.type)).toEqual(['session.waiting', 'session.answered', 'session.done']);
  });
});
