/**
 * Moving a session to another version of its package (`steward upgrade`): the chart's
 * `package_upgraded` event, which the runtime sends, never a client (the package comes from
 * the runtime's packages folder), and the one rule it must keep: the wait in progress stays
 * valid — the step, the artifact under review and their tags still exist in the new version.
 * The guard `upgradeKeepsWait` and the runtime's refusal read the same function.
 */
import type { PackageInfo, SessionContext } from './session.context.js';

/** The event that moves a session to another version of its package; journalled with both hashes. */
export interface PackageUpgradedEvent {
  type: 'package_upgraded';
  /** The new version's manifest, as the machine needs it (its `version` is `to`). */
  package: PackageInfo;
  /** The hash the session was pinned to (null: a session saved before pinning). */
  from: string | null;
  to: string;
  by?: string;
  at?: string;
}

/**
 * Why the session cannot move to `next` now, in words that name the fix; null when it can.
 *
 * @example
 * const problem = upgradeProblem(session.actorRef.getSnapshot().context, nextInfo);
 * if (problem) console.log(problem); // e.g. the step waiting for approval runs a worker the new version lacks
 */
export function upgradeProblem(context: SessionContext, next: PackageInfo): string | null {
  const current = context.package;
  if (!current) return 'The session has no package yet (it waits for one to be chosen): choose a package instead of upgrading.';
  if (next.id !== current.id) return `The session runs package "${current.id}"; it cannot be moved to package "${next.id}".`;
  const worker = (id: string) => next.workers.find((w) => w.id === id);
  const after = 'answer the wait in progress first, then upgrade';
  // The step in progress, and those of a fan-out (team.ts) still to run or to go on.
  for (const step of [context.step, ...(context.team?.branches ?? []).map((b) => b.step)]) {
    if (!step) continue;
    const w = worker(step.workerId);
    if (!w) return `The step in progress runs worker "${step.workerId}", which the new version of "${next.id}" no longer has: ${after}.`;
    if (step.roleId !== undefined && !w.roles.some((r) => r.id === step.roleId))
      return `The step in progress runs worker "${step.workerId}" as role "${step.roleId}", which the new version no longer defines: ${after}.`;
  }
  for (const artifact of context.artifacts) {
    if (artifact.status !== 'pending_review' && artifact.status !== 'rejected') continue;
    const w = worker(artifact.workerId);
    if (!w) return `Artifact ${artifact.id} under review comes from worker "${artifact.workerId}", which the new version no longer has: ${after}.`;
    const lost = Object.keys(artifact.tags).filter((tag) => !w.outputTags.includes(tag));
    if (lost.length)
      return `Artifact ${artifact.id} under review holds ${lost.map((t) => `"${t}"`).join(', ')}, which worker "${w.id}" no longer writes in the new version: ${after}.`;
  }
  return null;
}
