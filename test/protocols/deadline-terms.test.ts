/**
 * A wait's deadline and deciders, as each surface shows them: the view (the chart's current
 * rule, with the due time the runtime passes in), the AG-UI interrupt (`expiresAt`, AG-UI's
 * own field, and the rule in Steward's metadata; checked with @ag-ui/core's schema) and the
 * A2A input-required status (its metadata, through the SDK's own JSON form) and the MCP form
 * (its message, what a host shows its person).
 */
import { describe, expect, it } from 'vitest';
import { InterruptSchema } from '@ag-ui/core/schemas';
import { TaskStatus } from '@a2a-js/sdk';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { sessionView } from '../../src/core/view.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { interruptFor } from '../../src/protocols/ag-ui/interrupts.js';
import { statusOf } from '../../src/protocols/a2a/tasks.js';
import { formsFor } from '../../src/protocols/mcp/forms.js';
import { everyOutcome } from '../support/every-outcome.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-deadline-terms-');

const DUE = '2026-12-07T09:00:00.000Z';

/** A session at the approval of echo's step (wait 2): its rule escalates to `leads` after 1h, and `ops` decides it. */
async function atApproval() {
  const model = new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Note it.', requiresApproval: true })] },
  ]);
  const runtime = createRuntime({ model, store: new MemoryStore(), ...everyOutcome(temp.path('packages')) });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const intake = session.view();
  const sent = await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
  expect(sent.ok && sent.view.waitingReason).toBe('approve_step');
  return { session, intake };
}

describe('a wait’s deadline and deciders', () => {
  it('the view derives them from the chart: the current rule, its due time as the runtime passes it, null where there is none', async () => {
    const { session, intake } = await atApproval();
    // intake waits for no decision: the testing terms give it no deadline and no deciders.
    expect(intake).toMatchObject({ waitingReason: 'intake', deadline: null, deciders: null });
    const snapshot = session.actorRef.getSnapshot();
    expect(sessionView(snapshot)).toMatchObject({ deadline: { level: 0, outcome: 'escalate', after: '1h', to: 'leads', dueAt: null }, deciders: ['ops'] });
    expect(sessionView(snapshot, undefined, { dueAt: DUE }).deadline).toEqual({ level: 0, outcome: 'escalate', after: '1h', to: 'leads', dueAt: DUE });

    // Escalated: a new wait for the group it went to, with the chain's next rule.
    session.actorRef.send({ type: 'deadline_passed', wait: 2, level: 0 });
    expect(session.view()).toMatchObject({ wait: 3, deadline: { level: 1, outcome: 'remind', to: null }, deciders: ['leads'] });
    session.actorRef.send({ type: 'deadline_passed', wait: 3, level: 1 });
    expect(session.view()).toMatchObject({ wait: 3, deadline: { level: 2, outcome: 'reject' }, deciders: ['leads'] });
    // Rejected: the session runs, and a view out of a wait has neither (a due time passed in is not shown).
    session.actorRef.send({ type: 'deadline_passed', wait: 3, level: 2 });
    expect(sessionView(session.actorRef.getSnapshot(), undefined, { dueAt: DUE })).toMatchObject({ phase: 'running', deadline: null, deciders: null });
  });

  it('the AG-UI interrupt expires when the deadline is due (AG-UI’s expiresAt) and says what happens then in its metadata', async () => {
    const { session } = await atApproval();
    const view = sessionView(session.actorRef.getSnapshot(), undefined, { dueAt: DUE });
    const interrupt = interruptFor(view);
    expect(InterruptSchema.parse(interrupt)).toEqual(interrupt);
    expect(interrupt.expiresAt).toBe(DUE);
    expect(interrupt.metadata).toMatchObject({
      steward: { wait: 2, deadline: { level: 0, outcome: 'escalate', after: '1h', to: 'leads', dueAt: DUE }, deciders: ['ops'] },
    });
    // Without a due time (a reader that does not hold the session), no expiresAt; the rule is still told.
    const unknown = interruptFor(sessionView(session.actorRef.getSnapshot()));
    expect(unknown).not.toHaveProperty('expiresAt');
    expect(unknown.metadata).toMatchObject({ steward: { deadline: { outcome: 'escalate', dueAt: null } } });
  });

  it('the A2A input-required status carries the deadline (due, outcome, group) and the deciders in its metadata, and its interrupt expiresAt', async () => {
    const { session } = await atApproval();
    const snapshot = session.actorRef.getSnapshot();
    const view = sessionView(snapshot, undefined, { dueAt: DUE });
    const thread = { view, context: snapshot.context, interrupt: interruptFor(view), firstRequest: false, packageId: 'tiny' };
    const json = TaskStatus.toJSON(statusOf(thread, new Date(DUE))) as {
      state: string;
      message: { metadata: Record<string, unknown>; parts: { data?: { interrupt: Record<string, unknown> } }[] };
    };
    expect(json.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(json.message.metadata).toMatchObject({
      steward: { wait: 2, deadline: { level: 0, dueAt: DUE, outcome: 'escalate', to: 'leads', after: '1h' }, deciders: ['ops'] },
    });
    expect(json.message.parts.find((p) => p.data)?.data?.interrupt).toMatchObject({ expiresAt: DUE });
  });

  it('the MCP form says by when to decide, what happens then and who decides, below its prompt', async () => {
    const { session } = await atApproval();
    const [form] = formsFor(sessionView(session.actorRef.getSnapshot(), undefined, { dueAt: DUE }));
    expect((form!.request.params as { message: string }).message).toBe(
      `Run echo: Note it.\n\nDecide by ${DUE} (then: escalated to leads).\nDecided by: ops (or admin).`,
    );
  });
});
