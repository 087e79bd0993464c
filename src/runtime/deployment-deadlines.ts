/**
 * The deadlines a session's package carries: the deployment's (`createRuntime({ deadlines })`)
 * over the manifest's, reason by reason. A worker's own front matter `deadlines` are not
 * merged here: they stay on the worker and win for its waits when the chart reads the chain
 * (deadlines.ts `chainFor`), so the order is worker, then deployment, then manifest.
 */
import type { DeadlinePolicy } from '../core/machines/deadlines.js';
import type { PackageInfo } from '../core/machines/session.context.js';

/**
 * The package info with the deployment's deadlines over its manifest's; the same object when
 * the deployment sets none (a package info stays byte-identical without them).
 *
 * @example
 * withDeploymentDeadlines(info, { approve_step: { after: '24h', outcome: 'reject' } }).deadlines; // { ...info.deadlines, approve_step: … }
 */
export function withDeploymentDeadlines(info: PackageInfo, deadlines: DeadlinePolicy | undefined): PackageInfo {
  if (!deadlines) return info;
  return { ...info, deadlines: { ...info.deadlines, ...deadlines } };
}
