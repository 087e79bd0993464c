/**
 * `session.enabledEvents()`: what the session would take now, the machine's guards evaluated —
 * a subset of `view().acceptedEvents` (which lists what the state declares).
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

describe('enabled events', () => {
  it('follow the guards: no confirm before a request, no answers without a card, accept only with an artifact', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which tea?', questions: ['Green or black?'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Green tea.' } })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    expect(session.view().acceptedEvents).toEqual(['user_submitted_input', 'user_confirmed_intake', 'user_answered_questions', 'user_skipped_questions']);
    expect(session.enabledEvents()).toEqual(['user_submitted_input']);

    await session.send({ type: 'user_submitted_input', text: 'A note about tea' });
    expect(session.enabledEvents()).toEqual(['user_submitted_input', 'user_confirmed_intake', 'user_answered_questions', 'user_skipped_questions']);

    const review = await session.send({ type: 'user_answered_questions', answers: { q1: 'Green' } });
    expect(review.view.waitingReason).toBe('review_artifact');
    expect(session.enabledEvents()).toEqual(['user_accepted_artifact', 'user_rejected_artifact']);
    model.assertComplete();
  });

  it('in skill_selection a package can be chosen; once done nothing is enabled', async () => {
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'ok' })] }]);
    const runtime = createRuntime({ model });
    const session = await runtime.createSession();
    expect(session.enabledEvents()).toEqual(['user_selected_package']);
    await session.send({ type: 'user_selected_package', packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'x' });
    expect(session.view().phase).toBe('done');
    expect(session.enabledEvents()).toEqual([]);
    model.assertComplete();
  });
});
