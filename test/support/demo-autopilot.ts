/**
 * A user who says yes to everything, for sessions on the demo model: sends the request,
 * confirms intake, approves each proposed step (each item of a fan-out, one by one), accepts
 * each artifact under review (each of a fan-in, one by one). Used by the demo model's tests and
 * the fan-out benchmark (bench/fan-out.ts).
 */
import type { SessionView } from '../../src/core/view.js';
import type { UserEvent } from '../../src/core/machines/session.events.js';
import type { Session } from '../../src/runtime/session.js';

/** The move at a wait; null: none (a wait this user does not handle). */
function yesTo(view: SessionView, request: string): UserEvent | null {
  const proposed = view.team?.find((t) => t.status === 'proposed');
  const underReview = view.team?.find((t) => t.status === 'submitted')?.artifact ?? view.artifact;
  switch (view.waitingReason) {
    case 'intake':
      return view.blackboard.some((b) => b.tag === 'request') ? { type: 'user_confirmed_intake' } : { type: 'user_submitted_input', text: request };
    case 'approve_step':
      return { type: 'user_approved_next_step', wait: view.wait, ...(proposed ? { item: proposed.item } : {}) };
    case 'review_artifact':
      return underReview ? { type: 'user_accepted_artifact', artifactId: underReview.id } : null;
    default:
      return null;
  }
}

/**
 * Plays the session until done, or until `stop` says so at a wait; returns the views of the
 * waits it met (the last one included). `at` is when each view was shown (performance.now()).
 *
 * @example
 * const views = await sayYes(session, 'REST or gRPC?', (view) => view.waitingReason === 'review_artifact');
 */
export async function sayYes(
  session: Session,
  request: string,
  stop: (view: SessionView) => boolean = () => false,
): Promise<{ view: SessionView; at: number }[]> {
  const seen = [{ view: session.view(), at: performance.now() }];
  for (let i = 0; i < 60; i++) {
    const view = seen.at(-1)!.view;
    if (view.state === 'done' || stop(view)) return seen;
    const event = yesTo(view, request);
    if (!event) throw new Error(`no move for this user in ${view.state}`);
    const result = await session.send(event);
    if (!result.ok) throw new Error(`${event.type} refused in ${view.state}: ${result.error.message}`);
    seen.push({ view: result.view, at: performance.now() });
  }
  throw new Error('the session did not end within 60 user events');
}
