/**
 * The turns take what the runtime gives them as one options object: a gate asked before
 * each model call (a rejection means the call is not made).
 */
import { expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { createManagerTurn, createWorkerTurn, sessionMachine } from '../../src/machine.js';
import { ScriptedModel, scriptedCall, testingPackage } from '../../src/testing.js';

it('createManagerTurn(model, { gate }): a gate that refuses stops the call before the model is asked', async () => {
  const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' }, 'c1')] }]);
  const asked: object[] = [];
  const gate = (system: object) => (asked.push(system), Promise.reject(new Error('the lease is gone')));
  const machine = sessionMachine.provide({
    actors: { managerTurn: createManagerTurn(model, { gate }), workerTurn: createWorkerTurn(model, () => 'prompt', { gate }) },
  });
  const actor = createActor(machine, { input: { sessionId: 'gated', package: testingPackage } });
  actor.subscribe({ error: () => {} });
  actor.start();
  actor.send({ type: 'user_submitted_input', text: 'Otters.' });
  actor.send({ type: 'user_confirmed_intake' });
  const settled = await waitFor(actor, (s) => s.status !== 'active' || !s.matches('running'), { timeout: 5_000 });
  expect(asked).toEqual([actor.system]);
  expect(model.calls).toHaveLength(0);
  expect(settled.matches('running')).toBe(false); // a failed round waits for the user
  actor.stop();
});
