// (c) What a typical page bundles from steward/machine (tree-shaken).
import { createActor } from 'xstate';
import { createManagerTurn, createWorkerTurn, enabledUserEvents, sessionMachine, sessionView } from 'steward/machine';

export function start(model, team, promptOf) {
  const machine = sessionMachine.provide({ actors: { managerTurn: createManagerTurn(model), workerTurn: createWorkerTurn(model, promptOf) } });
  const actor = createActor(machine, { input: { sessionId: 'page', package: team } }).start();
  return { actor, view: () => sessionView(actor.getSnapshot()), enabled: () => enabledUserEvents(actor.getSnapshot()) };
}
