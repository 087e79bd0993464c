/**
 * The rule table's part for a fan-out (team.ts): whether a run_worker call may join the
 * others of its reply (the rule `workersIndependent`), and why a decision that names one item
 * of several is refused. rules.ts holds the table; these are its checks.
 */
import type { QueuedCall } from '../tools/reply.js';
import type { Finding } from '../tools/validation.js';
import { EVENT_GUARDS, roleRefusal } from './rules.js';
import type { SessionContext } from './session.context.js';
import type { UserEvent } from './session.events.js';
import { branchesIn, branchOf, plannedSteps, teamArtifactsUnderReview, type Branch } from './team.js';

/**
 * A run_worker call after another one in the same reply: the workers run at once, so each
 * must be independent of the others — every input tag already on the blackboard, no tag
 * written by two of them, none reading what another writes. The first tie found is named.
 */
export function independent(call: QueuedCall, context: SessionContext): Finding | null {
  const chosen = context.reply.boundary;
  if (call.call.function.name !== 'run_worker' || chosen?.tool !== 'run_worker') return null;
  const workers = context.package?.workers ?? [];
  const infoOf = (id: string) => workers.find((w) => w.id === id);
  const head = infoOf(String((call.args as { workerId?: unknown }).workerId));
  if (!head) return null; // rule 3 refused an unknown worker already
  const others = plannedSteps(chosen).map((p) => infoOf(p.step.workerId)!);
  const tie = (message: string, tag: string, other?: string) => ({
    message: `${message} Run ${head.id} in a later turn, once the others are done.`,
    data: { workerId: head.id, tag, ...(other ? { with: other } : {}) },
  });
  for (const w of [head, ...others]) {
    const missing = w.inputTags.find((t) => !Object.hasOwn(context.blackboard, t));
    if (missing) return tie(`Workers run together only when every input is on the blackboard, and "${missing}" (an input of ${w.id}) is not yet.`, missing);
  }
  for (const other of others) {
    const shared = head.outputTags.find((t) => other.outputTags.includes(t));
    if (shared) return tie(`${head.id} and ${other.id} both write "${shared}": workers that run together write different tags.`, shared, other.id);
    const reads = head.inputTags.find((t) => other.outputTags.includes(t)) ?? other.inputTags.find((t) => head.outputTags.includes(t));
    if (reads)
      return tie(`"${reads}" ties ${head.id} to ${other.id} (one reads what the other writes): workers that run together are independent.`, reads, other.id);
  }
  return null;
}

const listed = (branches: readonly Branch[], what: (b: Branch) => string) => branches.map((b) => `"${what(b)}" (${b.step.workerId})`).join(', ') || 'none';

/** Why a decision on a step of a fan-out is refused (null: it names a step that waits, and its edits fit). */
export function teamStepRefusal(context: SessionContext, event: UserEvent | null): string | null {
  const waiting = branchesIn(context, 'proposed');
  if (waiting.length === 0) return 'No step of a fan-out waits for a decision.';
  if (event?.type !== 'user_approved_next_step' && event?.type !== 'user_rejected_next_step') return null;
  const steps = listed(waiting, (b) => b.item);
  if (event.item === undefined)
    return `A fan-out's steps are decided each on its own: name the step with "item" (steps waiting: ${steps}). Nothing was changed.`;
  const branch = branchOf(context, event.item);
  if (!branch) return `No step "${event.item}" is proposed; steps waiting: ${steps}. Nothing was changed.`;
  if (branch.status !== 'proposed') return `Step "${event.item}" was already decided; steps still waiting: ${steps}. Nothing was changed.`;
  const roleId = event.type === 'user_approved_next_step' ? event.edits?.roleId : undefined;
  return roleId === undefined ? null : roleRefusal(context, branch.step.workerId, roleId);
}

/** Why a decision on an artifact of a fan-in is refused (null: it names one under review, and its edits fit). */
export function teamArtifactRefusal(context: SessionContext, event: UserEvent | null): string | null {
  const reviewed = teamArtifactsUnderReview(context);
  if (reviewed.length === 0) return 'No artifact of a fan-out is under review.';
  if (event?.type !== 'user_accepted_artifact' && event?.type !== 'user_rejected_artifact') return null;
  if (!reviewed.some((b) => b.artifactId === event.artifactId))
    return `Artifact "${event.artifactId}" is not under review; under review: ${listed(reviewed, (b) => b.artifactId!)}. Nothing was changed.`;
  return event.type === 'user_accepted_artifact' ? EVENT_GUARDS.editsWithinArtifactTags.refusal(context, event) : null;
}

/** The refusal of a guard that decides one item of several: `last` says whether the item must be the last one. */
export function ofItems(refusal: (c: SessionContext, e: UserEvent | null) => string | null, count: (c: SessionContext) => number, last: boolean) {
  return (context: SessionContext, event: UserEvent | null): string | null => {
    const refused = refusal(context, event);
    if (refused !== null) return refused;
    const others = count(context) - 1;
    if (last) return others > 0 ? `${others} other item(s) still wait for a decision.` : null;
    return others > 0 ? null : 'This is the last item waiting: deciding it ends the wait.';
  };
}
