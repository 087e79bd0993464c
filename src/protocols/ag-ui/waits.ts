/**
 * What the protocols ask of a session's waits: whether a resume or an answer for a closed wait
 * repeats the answer the journal holds for it (runtime/journal-waits.ts finds that entry), and
 * whether a session still waits for its first request.
 */
import { REQUEST_TAG } from '../../core/blackboard/blackboard.js';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { SessionView } from '../../core/view.js';
import { answerOfWait } from '../../runtime/journal-waits.js';
import type { JournalEntry } from '../../store/session-store.js';
import { answerOf, sameAnswer } from './interrupts.js';

/** Whether the session still waits for its first request (a new thread or context): a user message is that request. */
export function waitsForFirstRequest(view: SessionView, context: SessionContext): boolean {
  return view.waitingReason === 'intake' && !Object.hasOwn(context.blackboard, REQUEST_TAG);
}

/**
 * How an answer for wait `wait` relates to what the journal holds (`entries`, read once by
 * the caller): that wait was answered with this same answer (a repeat: nothing to send),
 * answered otherwise, or not answered at all.
 *
 * @example
 * const closed = closedWaitAnswer(await readJournal(store, id), 3, { approved: false, reason: 'No.' });
 * if (closed === 'same') return reportAsItIs();
 */
export function closedWaitAnswer(entries: readonly JournalEntry[], wait: number, payload: unknown): 'same' | 'other' | 'unanswered' {
  const answered = answerOfWait(entries, wait);
  if (!answered) return 'unanswered';
  return sameAnswer(answerOf(answered.payload as Record<string, unknown>), payload) ? 'same' : 'other';
}
