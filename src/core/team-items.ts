/**
 * Which items of a fan-out a decision is about, read from the view alone: the CLI, the
 * inspector page and a client offer one decision per item from here. Only types are imported,
 * so the inspector's page bundle takes it as it is.
 */
import type { UserEventType } from './machines/session.events.js';
import type { ArtifactView, SessionView, TeamItemView } from './view.js';

/** A team item whose artifact is under review. */
export type ReviewedItem = TeamItemView & { artifact: ArtifactView };

/**
 * The proposed steps of a fan-out that wait for approve / reject (none outside approve_step).
 *
 * @example
 * proposedItems(view).map((t) => t.item); // ['run_north', 'run_east']: decide each with `item`
 */
export function proposedItems(view: Pick<SessionView, 'waitingReason' | 'team'>): TeamItemView[] {
  if (view.waitingReason !== 'approve_step') return [];
  return (view.team ?? []).filter((t) => t.status === 'proposed');
}

/**
 * The artifacts of a fan-in under review, each decided by its id (none outside review_artifact).
 *
 * @example
 * reviewedItems(view).map((t) => t.artifact.id); // ['a1', 'a2']: accept or reject each by artifactId
 */
export function reviewedItems(view: Pick<SessionView, 'waitingReason' | 'team'>): ReviewedItem[] {
  if (view.waitingReason !== 'review_artifact') return [];
  return (view.team ?? []).filter((t): t is ReviewedItem => t.status === 'submitted' && t.artifact !== undefined);
}

/** The step decisions name an item; the review decisions an artifact. */
const STEP_DECISIONS: readonly string[] = ['user_approved_next_step', 'user_rejected_next_step'] satisfies UserEventType[];
const REVIEW_DECISIONS: readonly string[] = ['user_accepted_artifact', 'user_rejected_artifact'] satisfies UserEventType[];

/**
 * The items one event decides one at a time, at the view's wait: the proposed steps for a step
 * decision, the artifacts under review (only when several are) for a review decision, else none.
 *
 * @example
 * for (const t of itemsDecidedBy('user_approved_next_step', view)) offer({ type: 'user_approved_next_step', item: t.item });
 */
export function itemsDecidedBy(type: string, view: Pick<SessionView, 'waitingReason' | 'team'> | null): TeamItemView[] {
  if (!view) return [];
  if (STEP_DECISIONS.includes(type)) return proposedItems(view);
  if (REVIEW_DECISIONS.includes(type)) {
    const reviewed = reviewedItems(view);
    return reviewed.length > 1 ? reviewed : [];
  }
  return [];
}
