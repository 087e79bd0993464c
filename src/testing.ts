/**
 * `steward/testing`: a strict scripted model and a model-based test for session machines.
 * Like `steward/machine`, nothing here imports Node, so these run in a browser test too.
 *
 * @example
 * import { sessionMachine } from 'steward/machine';
 * import { ScriptedModel, scriptedCall, testAllTransitions } from 'steward/testing';
 *
 * const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] }]);
 * const { covered, total, uncovered } = testAllTransitions(sessionMachine.provide({ guards: { ... } }));
 */
import type { AnyStateMachine } from 'xstate';
import { sessionMachine } from './machines/session.machine.js';
import { testAllTransitions as walkAll, type TestAllTransitionsOptions, type TestAllTransitionsResult } from './testing/all-transitions.js';

export { ScriptedModel, scriptedCall, type ScriptStep, type ScriptedReply, type ScriptedToolCall } from './models/scripted-model.js';
export { sessionFacts, type ActorResult, type TestAllTransitionsOptions, type TestAllTransitionsResult, type TransitionPath } from './testing/all-transitions.js';
export { testingPackage, managerReplies, workerReplies } from './testing/catalogue.js';
export { TransitionTestError, ScriptMismatchError } from './errors.js';

/**
 * Walks `machine` (default: Steward's `sessionMachine`; pass your `sessionMachine.provide(...)`)
 * along every shortest path, replays each on a real actor whose invoked actors never settle,
 * and returns the transition coverage: `{ covered, total, uncovered, paths }`.
 */
export function testAllTransitions(machine: AnyStateMachine = sessionMachine, options?: TestAllTransitionsOptions): TestAllTransitionsResult {
  return walkAll(machine, options);
}
