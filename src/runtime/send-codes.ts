/**
 * The codes of a refused send that carry details of their own (SendError in session.ts), and
 * the code any other error thrown under a send is reported with.
 */
import { StewardError, type StewardErrorCode } from '../core/errors.js';

/** Refusals with fields of their own: the chart's reading (event_refused, not_a_decider), the waits (wait_closed), the lease's holder. */
export type DetailedSendCode = 'event_refused' | 'not_a_decider' | 'wait_closed' | 'session_running_elsewhere';
/** Every other code a send may fail with: a message, no more. */
export type PlainSendCode = Exclude<StewardErrorCode, DetailedSendCode>;

const DETAILED: ReadonlySet<string> = new Set<DetailedSendCode>(['event_refused', 'not_a_decider', 'wait_closed', 'session_running_elsewhere']);

/**
 * The code an error thrown under a send is reported with: a Steward error keeps its own (a
 * store's failure, say), unless it is one that needs details it does not carry; anything else
 * is Steward's bug, `internal_error`.
 *
 * @example
 * return { ok: false, error: { code: plainCodeOf(error), message } };
 */
export function plainCodeOf(error: unknown): PlainSendCode {
  return StewardError.isInstance(error) && !DETAILED.has(error.code) ? (error.code as PlainSendCode) : 'internal_error';
}
