/**
 * Issue 12, part 5: a token budget per burst (maxBurstTokens). A model call starts only if
 * the burst's tokens plus the last call's (the estimate of the next) stay within the budget;
 * a hard user event starts the count again.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, UserError } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const usage = { promptTokens: 80, completionTokens: 20 }; // 100 per call
const listWorkers = () => ({ agent: 'manager' as const, toolCalls: [scriptedCall('list_workers', {})], usage });

describe('maxBurstTokens', () => {
  it('stops the burst exactly when the next call would go over, and a user action resets the count', async () => {
    // Budget 300 at 100 per call: calls 1–3 fit (after 2: 200 + 100 ≤ 300); after 3 the next would make 400.
    const model = new ScriptedModel([
      listWorkers(),
      listWorkers(),
      listWorkers(),
      listWorkers(),
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })], usage },
    ]);
    const runtime = createRuntime({ model, maxBurstTokens: 300 });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const first = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    expect(model.calls).toHaveLength(3);
    expect(first.view).toMatchObject({ waitingReason: 'input', burst: 3, tokens: { burst: 300, session: 300, maxBurst: 300 } });
    expect(first.view.notice).toBe(
      'This burst used 300 tokens; the next model call (about 100, like the last one) would go over the ' +
        'budget of 300 tokens per burst (maxBurstTokens). Nothing was lost: say how to continue and the ' +
        'count starts again from 0, or raise the budget (createSession({ maxBurstTokens }), steward run/new ' +
        '--max-burst-tokens N).',
    );

    const second = await session.send({ type: 'user_submitted_input', text: 'Go on.' });
    expect(model.calls).toHaveLength(5);
    expect(second.view).toMatchObject({ phase: 'done', tokens: { burst: 200, session: 500, maxBurst: 300 } });
    model.assertComplete();
  });

  it("is off by default, per session over the runtime, and checked before a worker's next call too", async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate.', requiresApproval: true })], usage },
      { agent: 'worker', content: 'Thinking…', usage: { promptTokens: 500, completionTokens: 100 } },
    ]);
    const runtime = createRuntime({ model, maxBurstTokens: 100_000 });
    const session = await runtime.createSession({ packageId: 'tiny', maxBurstTokens: 1000 });
    await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    const result = await session.send({ type: 'user_approved_next_step' });
    // The approval reset the count: the worker's 600 tokens, and 600 more would be 1,200 > 1,000.
    expect(model.calls).toHaveLength(2);
    expect(result.view).toMatchObject({ waitingReason: 'input', tokens: { burst: 600, maxBurst: 1000 } });
    expect(result.view.notice).toContain('This burst used 600 tokens');
    expect(session.actorRef.getSnapshot().context.transcripts.manager.messages.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringContaining('stopped before submitting: this burst used 600 tokens of its budget of 1000'),
    });

    const off = await createRuntime({ model: new ScriptedModel() }).createSession({ packageId: 'tiny' });
    expect(off.view().tokens).toEqual({ burst: 0, session: 0, maxBurst: null });
    expect(() => createRuntime({ model: new ScriptedModel(), maxBurstTokens: 0 })).toThrow(UserError);
    await expect(createRuntime({ model: new ScriptedModel() }).createSession({ maxBurstTokens: 1.5 })).rejects.toThrow('maxBurstTokens must be a whole number');
  });
});

describe('snapshot schema v2', () => {
  it('a v1 snapshot keeps its usage, moved into the ledger, with no budget', async () => {
    const { readFileSync } = await import('node:fs');
    const v1 = JSON.parse(readFileSync(new URL('../fixtures/snapshots/v1.json', import.meta.url), 'utf8')) as {
      snapshot: { context: { usage: { promptTokens: number; completionTokens: number } } };
    };
    v1.snapshot.context.usage = { promptTokens: 70, completionTokens: 5 };
    const session = createRuntime({ model: new ScriptedModel() }).restoreSession(v1);
    expect(session.view().usage).toEqual({ promptTokens: 70, completionTokens: 5 });
    expect(session.view().tokens).toEqual({ burst: 0, session: 75, maxBurst: null });
    expect(Object.keys(session.actorRef.getSnapshot().context)).not.toContain('usage');
  });
});
