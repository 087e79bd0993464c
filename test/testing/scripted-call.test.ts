/**
 * `scriptedCall()` builds a ScriptedModel step's call, never a ToolCall. The types already
 * refuse it in a ModelReply or an actor's output (test/consumer/app/consumer.ts); where they
 * are bypassed, the session must fail with a message naming the mistake, not take the reply
 * as one without tool calls.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, toPromise, waitFor } from 'xstate';
import { sessionMachine, type SessionContext, type TurnOutput } from '../../src/machine.js';
import { ScriptedModel, scriptedCall, testingPackage } from '../../src/testing.js';
import { createManagerTurn } from '../../src/machine.js';

describe('scriptedCall', () => {
  it('fails loudly when put in an actor output as if it were a ToolCall', async () => {
    const misused = fromPromise<TurnOutput, SessionContext>(
      async () => ({ content: null, toolCalls: [scriptedCall('finish', { summary: 'x' })] }) as unknown as TurnOutput,
    );
    const actor = createActor(sessionMachine.provide({ actors: { managerTurn: misused } }), { input: { sessionId: 'misuse', package: testingPackage } });
    actor.subscribe({ error: () => {} });
    actor.start();
    actor.send({ type: 'user_submitted_input', text: 'Otters.' });
    actor.send({ type: 'user_confirmed_intake' });
    await waitFor(actor, (s) => s.status !== 'active' || !s.matches('running'), { timeout: 5_000 }).catch(() => {});
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe('error');
    expect(String((snapshot.error as Error).message)).toMatch(/scriptedCall\('finish'\) is a ScriptedModel step, not a ToolCall/);
    actor.stop();
    await expect(toPromise(actor)).rejects.toThrow(/not a ToolCall/);
  });

  it('is what ScriptedModel turns into a ToolCall', async () => {
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' }, 'c1')] }]);
    const turn = createManagerTurn(model);
    const actor = createActor(sessionMachine.provide({ actors: { managerTurn: turn } }), { input: { sessionId: 'ok', package: testingPackage } }).start();
    actor.send({ type: 'user_submitted_input', text: 'Otters.' });
    actor.send({ type: 'user_confirmed_intake' });
    const done = await waitFor(actor, (s) => s.status !== 'active', { timeout: 5_000 });
    expect(done.status).toBe('done');
    expect(model.calls).toHaveLength(1);
    model.assertComplete();
  });
});
