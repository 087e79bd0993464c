/**
 * Edge cases found in review: each once broke a promise of the design.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, type Model } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const request = { type: 'user_submitted_input', text: 'A note about tea' } as const;

describe('edge cases', () => {
  it('a worker that uses up the burst ends its step and the manager hears of it', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
      { agent: 'worker', content: 'thinking…' },
      { agent: 'worker', content: 'still thinking…' },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'The worker got stuck. Again?' })] },
    ]);
    const session = await createRuntime({ model, maxBurst: 3 }).createSession({ packageId: 'tiny' });
    const stuck = await session.send(request);
    expect(stuck.view).toMatchObject({ waitingReason: 'input', burst: 3 });
    expect(stuck.view.notice).toMatch(/used all 3 rounds/);
    expect(stuck.view.pendingStep).toBeUndefined();
    const next = await session.send({ type: 'user_submitted_input', text: 'What happened?' });
    expect(next.view.message).toBe('The worker got stuck. Again?');
    const told = model.calls[3]!.messages.map((m) => m.content).join('\n');
    expect(told).toContain('The worker echo used all 3 rounds without submitting; its step ended.');
    model.assertComplete();
  });

  it('arguments that are not a JSON string are refused by rule 2, not a crash', async () => {
    const model = new ScriptedModel([
      () => ({ content: null, toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ask_user', arguments: { message: 'hi' } as unknown as string } }] }),
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Fixed.' })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const result = await session.send(request);
    expect(result.ok).toBe(true);
    expect(result.view.message).toBe('Fixed.');
    const refusal = model.calls[1]!.messages.find((m) => m.role === 'tool');
    expect(refusal?.content).toMatch(/^Error: The arguments of ask_user are not valid JSON \(arguments must be a JSON string, got object\)/);
    model.assertComplete();
  });

  it('rejecting the first proposed step keeps the intake open: a clarification returns to intake', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: true })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'What would you like instead?' })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    expect((await session.send(request)).view.waitingReason).toBe('approve_step');
    const back = await session.send({ type: 'user_rejected_next_step', reason: 'Not yet' });
    expect(back.view).toMatchObject({ waitingReason: 'intake', message: 'What would you like instead?' });
    model.assertComplete();
  });

  it('stopping a session while a model call runs resolves the pending send as stopped', async () => {
    const hanging: Model = { label: 'hangs', complete: () => new Promise(() => {}) };
    const session = await createRuntime({ model: hanging }).createSession({ packageId: 'tiny' });
    const pending = session.send(request);
    await new Promise((r) => setTimeout(r, 10));
    session.stop();
    const result = await pending;
    expect(result).toMatchObject({ ok: false, error: { code: 'session_stopped' } });
    const after = await session.send({ type: 'user_submitted_input', text: 'again' });
    expect(after).toMatchObject({ ok: false, error: { code: 'session_stopped' } });
  });

  it('an off-shape reply from an app-provided model is an empty reply, not a crash', async () => {
    const model = new ScriptedModel([
      () => undefined as never,
      () => ({ content: 42, toolCalls: 'nope' }) as never,
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Back on track.' })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const result = await session.send(request);
    expect(result).toMatchObject({ ok: true, view: { waitingReason: 'intake', message: 'Back on track.', burst: 3 } });
    model.assertComplete();
  });
});
