/**
 * A runtime's options for sessions whose waits go through every deadline outcome: the tiny
 * package with its worker decided by `ops` (steps, tool calls, artifacts), and each decision
 * wait escalated to `leads`, then reminded, then rejected (`createRuntime({ deadlines })`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DECISION_WAITS, type DeadlinePolicy } from '../../src/core/machines/deadlines.js';
import { tinyDecidedBy } from './decided-package.js';

/** Escalate, remind, reject: every outcome, in that order, at each decision wait. */
const EVERY_OUTCOME: DeadlinePolicy = Object.fromEntries(
  DECISION_WAITS.map((reason) => [
    reason,
    { after: '1h', outcome: 'escalate', to: 'leads', then: { after: '1h', outcome: 'remind', then: { after: '1h', outcome: 'reject' } } },
  ]),
);

/**
 * The options, the package written into `dir` the first time.
 *
 * @example
 * const runtime = createRuntime({ model, store, ...everyOutcome(temp.path('packages')) });
 */
export function everyOutcome(dir: string): { packagesDir: string; deadlines: DeadlinePolicy } {
  // Written once per folder: a file's tests share it.
  const packagesDir = existsSync(join(dir, 'tiny')) ? dir : tinyDecidedBy(dir, 'ops', ['approvers', 'reviewers']);
  return { packagesDir, deadlines: EVERY_OUTCOME };
}
