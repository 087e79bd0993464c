/**
 * The first user event a protocol route (a new AG-UI thread, a new A2A context) will send a
 * session it creates, checked before the session exists: a session refuses a malformed event
 * or one over the text limit only once it is stored, which would leave a session behind for a
 * request the client was told failed.
 */
import { LimitExceededError } from '../core/errors.js';
import { HttpError } from '../http/errors.js';
import { overLimitMessage, userTextChars, type Limits } from '../core/limits.js';
import { UserEventSchema } from '../core/machines/session.events.js';

/**
 * Why a new session would refuse `event` as its first: an HttpError `invalid_event` (400), a
 * LimitExceededError (`limit_exceeded`, 400) over `limits.userTextChars`; undefined when it
 * would take it (as far as the event alone tells: the chart decides the rest).
 *
 * @example
 * const problem = firstEventProblem({ type: 'user_submitted_input', text }, runtime.limits);
 * if (problem) throw problem; // before the session is created
 */
export function firstEventProblem(event: unknown, limits: Readonly<Pick<Limits, 'userTextChars'>>): HttpError | LimitExceededError | undefined {
  const parsed = UserEventSchema.safeParse(event);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; ');
    return new HttpError(400, 'invalid_event', `Invalid event: ${problems}. Nothing was created.`);
  }
  const size = userTextChars(parsed.data);
  if (size <= limits.userTextChars) return undefined;
  const message = `${overLimitMessage(`The text of ${parsed.data.type}`, size, 'userTextChars', limits.userTextChars)} Nothing was created; send a shorter text or raise the limit.`;
  return new LimitExceededError(message, 'userTextChars', limits.userTextChars, size);
}
