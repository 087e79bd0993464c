/**
 * `steward/testing`: models that need no LLM — a strict scripted model for tests, the
 * offline demo model — and a model-based test of every transition of a session machine.
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
import { sessionMachine } from './core/machines/session.machine.js';
import { testAllTransitions as walkAll, type TestAllTransitionsOptions, type TestAllTransitionsResult } from './testing/all-transitions.js';

export { ScriptedModel, scriptedCall, type ScriptStep, type ScriptedReply, type ScriptedToolCall, type ScriptedModelOptions } from './models/scripted-model.js';
export { DemoModel, DEMO_MODEL_LABEL, type DemoModelOptions } from './models/demo-model.js';
export {
  sessionFacts,
  type ActorResult,
  type ActorResults,
  type TestAllTransitionsOptions,
  type TestAllTransitionsResult,
  type TransitionPath,
} from './testing/all-transitions.js';
export { testingPackage, managerReplies, workerReplies, branchReplies } from './testing/catalogue.js';

/**
 * Walks `machine` (default: Steward's `sessionMachine`; pass your `sessionMachine.provide(...)`)
 * along every shortest path, replays each on a real actor whose invoked actors never settle,
 * and returns the transition coverage: `{ covered, total, uncovered, paths }`. A path the
 * replay does not follow throws a `TransitionTestError`.
 *
 * @example
 * import { sessionMachine } from 'steward';
 * import { testAllTransitions } from 'steward/testing';
 *
 * const result = testAllTransitions(sessionMachine.provide({ guards: { withinBurst: () => true } }));
 * console.log(`transitions covered: ${result.covered}/${result.total}`, result.uncovered);
 */
export function testAllTransitions(machine: AnyStateMachine = sessionMachine, options?: TestAllTransitionsOptions): TestAllTransitionsResult {
  return walkAll(machine, options);
}
