/**
 * A wait's deadline, as webhook receivers hear of it: each outcome of the chart's
 * `deadline_passed` fires its own event (`session.escalated`, `session.reminded`,
 * `session.expired`), the escalated wait is announced as a new one (`session.waiting`), and a
 * deadline's decision is not told again as a person's answer. The runtime's timer is played
 * by the test (`deadline_passed` sent to the session's actor), and the test does what the
 * session's journal does with each write: it takes the messages of what the chart emitted
 * (WebhookNotices, on the live actor) into the outbox. The receiver checks every signature
 * with the `standardwebhooks` library.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.js';
import { WebhookNotices } from '../../src/runtime/webhook-notices.js';
import { webhookTypeOf } from '../../src/webhooks/events.js';
import { everyOutcome } from '../support/every-outcome.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-webhook-deadlines-');
import { startReceiver, TEST_SECRET } from './receiver.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The manager proposes echo for approval, and finishes once the step is rejected. */
const proposesThenFinishes = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Note it.', requiresApproval: true })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Nobody approved; done.' })] },
  ]);

async function setup() {
  const receiver = await startReceiver();
  closers.push(receiver.close);
  const store = new MemoryStore();
  const receivers = [{ url: receiver.url, secret: TEST_SECRET }];
  const runtime = createRuntime({ model: proposesThenFinishes(), store, ...everyOutcome(temp.path('packages')) });
  const deliverer = new WebhookDeliverer({ outbox: store.outbox, receivers });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const proposed = await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
  expect(proposed.ok && proposed.view).toMatchObject({ waitingReason: 'approve_step', wait: 2 });
  // As the session does: waits opened before now were announced already.
  const notices = new WebhookNotices(receivers, session.actorRef.getSnapshot().context.waits.opened);
  session.actorRef.on('*', notices.noticed);
  let seq = 100;
  /** The runtime's timer: the deadline of `wait` at rule `level` passed. */
  const passes = async (wait: number, level: number) => {
    session.actorRef.send({ type: 'deadline_passed', wait, level });
    await session.settled();
    store.outbox.add(
      store.outbox.prepare(
        session.id,
        ++seq,
        new Date().toISOString(),
        notices.take(() => session.view()),
      ),
    );
    await deliverer.deliverDue();
    return receiver.received.splice(0).map((r) => {
      expect(r.verified).toBe(true);
      return r.body;
    });
  };
  return { session, passes };
}

describe('webhooks of a deadline', () => {
  it('escalated, then reminded, then expired: one event each, the escalated wait announced as new, the end after it', async () => {
    const { session, passes } = await setup();

    const escalated = await passes(2, 0);
    expect(escalated.map((b) => b.type)).toEqual(['session.escalated', 'session.waiting']);
    expect(escalated[0]!.data).toMatchObject({
      sessionId: session.id,
      event: { type: 'deadline_passed', reason: 'approve_step', wait: 2, level: 0, outcome: 'escalate', after: '1h', to: 'leads' },
      // The view after it: the new wait, for the group it went to, with the chain's next rule.
      wait: {
        wait: 3,
        waitingReason: 'approve_step',
        deciders: ['leads'],
        deadline: { level: 1, outcome: 'remind', after: '1h', to: null, dueAt: expect.stringMatching(/^\d{4}-.*Z$/) },
      },
    });
    expect(escalated[1]!.data).toMatchObject({ event: { type: 'waiting', reason: 'approve_step', wait: 3 } });

    const reminded = await passes(3, 1);
    expect(reminded.map((b) => b.type)).toEqual(['session.reminded']);
    expect(reminded[0]!.data).toMatchObject({
      event: { type: 'deadline_passed', wait: 3, level: 1, outcome: 'remind', to: null },
      wait: { wait: 3, deadline: { level: 2, outcome: 'reject' } },
    });

    // A timer fired twice: refused by the chart, nothing fires.
    expect(await passes(3, 1)).toEqual([]);

    const expired = await passes(3, 2);
    expect(expired.map((b) => b.type)).toEqual(['session.expired', 'session.done']);
    expect(expired[0]!.data).toMatchObject({ event: { type: 'deadline_passed', reason: 'approve_step', wait: 3, level: 2, outcome: 'reject' }, wait: null });
    expect(session.view().phase).toBe('done');
  });

  it('a decision by someone in none of the wait’s groups is refused and fires nothing; one by its group is answered', async () => {
    const { session, passes } = await setup();
    const refused = await session.send({ type: 'user_approved_next_step', wait: 2, by: 'eve', groups: ['outsiders'] });
    expect(!refused.ok && refused.error.message).toMatch(/^"eve" may not decide wait 2: only the groups ops \(or admin\) may/);
    // A stale deadline changes nothing either: still nothing to send.
    expect(await passes(2, 5)).toEqual([]);
    const approved = await session.send({ type: 'user_approved_next_step', wait: 2, by: 'olga', groups: ['ops'] });
    expect(approved.ok).toBe(true);
    const [answered] = await passes(9, 0);
    expect([answered!.type, answered!.data.event]).toEqual([
      'session.answered',
      expect.objectContaining({ type: 'decision', wait: 2, by: 'olga', eventType: 'user_approved_next_step' }),
    ]);
  });

  it('maps each chart event to one webhook type at most, by the deadline’s outcome, and a deadline’s decision to none', () => {
    expect(webhookTypeOf({ type: 'deadline_passed', outcome: 'reject' } as never)).toBe('session.expired');
    expect(webhookTypeOf({ type: 'deadline_passed', outcome: 'escalate' } as never)).toBe('session.escalated');
    expect(webhookTypeOf({ type: 'deadline_passed', outcome: 'remind' } as never)).toBe('session.reminded');
    expect(webhookTypeOf({ type: 'decision', eventType: 'user_approved_next_step' } as never)).toBe('session.answered');
    expect(webhookTypeOf({ type: 'decision', eventType: 'deadline_passed' } as never)).toBeUndefined();
    expect(webhookTypeOf({ type: 'notice' })).toBeUndefined();
  });
});
