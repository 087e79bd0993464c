/**
 * Which workers the demo manager proposes together in one reply. The chart decides by the rule
 * `workersIndependent` (src/core/machines/rules.ts) whether a run_worker call may join the
 * others of its reply; the demo asks that same rule, on a context built from what its prompt
 * shows (the workers' tags, the blackboard index), rather than restating it: a fan-out the demo
 * proposes is one the chart lets through.
 */
import type { SessionContext } from '../core/machines/session.context.js';
import { violationOf } from '../core/machines/rules.js';
import type { PlannedStep } from '../core/machines/team.js';
import type { QueuedCall } from '../core/tools/reply.js';

/** A worker as the manager's prompt lists it. */
export interface ListedWorker {
  id: string;
  inputTags: string[];
  outputTags: string[];
}

const planned = (workerId: string, item: string): PlannedStep => ({
  item,
  step: { workerId, reason: '', requiresApproval: false, approval: 'model' },
});

/**
 * Only the fields the rule reads are filled: the workers' tags, the keys of the blackboard, and
 * a reply whose head call is `candidate` after the run_worker calls already `chosen`.
 */
function contextFor(workers: readonly ListedWorker[], onBoard: readonly string[], chosen: readonly string[], candidate: string): SessionContext {
  const [first, ...rest] = chosen.map((id, i) => planned(id, `chosen_${i}`));
  const head: QueuedCall = {
    call: { id: 'candidate', type: 'function', function: { name: 'run_worker', arguments: JSON.stringify({ workerId: candidate }) } },
    args: { workerId: candidate },
  };
  const context = {
    package: { workers: workers.map((w) => ({ ...w, title: w.id, description: '', roles: [] })) },
    blackboard: Object.fromEntries(onBoard.map((tag) => [tag, []])),
    reply: { queue: [head], boundary: first ? { tool: 'run_worker', step: first.step, item: first.item, also: rest } : null, workerChoice: {} },
  };
  // A partial context: the rule reads no other field (test/models/demo-fan-out.test.ts runs it on the bundled research-brief).
  return context as unknown as SessionContext;
}

/**
 * The workers to propose together: the first of `candidates` (in chain order), then each later
 * one the rule `workersIndependent` lets join those chosen before it (every input tag on the
 * blackboard, no shared output tag, none reading what another writes).
 *
 * @example
 * const workers = [
 *   { id: 'fact-finder', inputTags: ['request'], outputTags: ['facts'] },
 *   { id: 'angle-finder', inputTags: ['request'], outputTags: ['angles'] },
 *   { id: 'writer', inputTags: ['facts', 'angles'], outputTags: ['brief'] },
 * ];
 * runnableTogether(workers, ['fact-finder', 'angle-finder', 'writer'], ['request']); // ['fact-finder', 'angle-finder']
 */
export function runnableTogether(workers: readonly ListedWorker[], candidates: readonly string[], onBoard: readonly string[]): string[] {
  const [first, ...rest] = candidates;
  if (first === undefined) return [];
  const chosen = [first];
  for (const candidate of rest) {
    if (violationOf(contextFor(workers, onBoard, chosen, candidate), 'manager', 'workersIndependent') === null) chosen.push(candidate);
  }
  return chosen;
}
