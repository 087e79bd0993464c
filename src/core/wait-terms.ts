/**
 * The terms of the open wait, as the CLI shows them: by when it must be decided and what
 * happens then (the view's `deadline`), and who may decide it (its `deciders`). Group names
 * come from a package's front matter: data, so the caller passes the block through safe-text.
 */
import { ADMIN_GROUP } from './machines/deadlines.js';
import type { DeadlineView, SessionView } from './view.js';

/** What the deadline's rule does when it passes, in words. */
function thenText(deadline: DeadlineView): string {
  if (deadline.outcome === 'escalate') return `escalated to ${deadline.to ?? '?'}`;
  return deadline.outcome === 'reject' ? 'rejected' : 'reminded';
}

/**
 * The lines of the wait's terms, or none when the wait has neither a deadline nor deciders.
 *
 * @example
 * waitTermsLines(view); // ['Decide by 2026-12-07T09:00:00.000Z (then: escalated to leads).', 'Decided by: ops (or admin).']
 */
export function waitTermsLines(view: Pick<SessionView, 'deadline' | 'deciders'>): string[] {
  const lines: string[] = [];
  const { deadline, deciders } = view;
  if (deadline) {
    const when = deadline.dueAt ? `Decide by ${deadline.dueAt}` : `Decide within ${deadline.after}`;
    lines.push(`${when} (then: ${thenText(deadline)}).`);
  }
  if (deciders?.length) lines.push(`Decided by: ${deciders.join(', ')} (or ${ADMIN_GROUP}).`);
  return lines;
}
