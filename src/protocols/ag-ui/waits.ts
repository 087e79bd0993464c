/**
 * The answer a closed wait got, from the journal: a user event names the wait it answers
 * (`wait`), and the entry of the one the chart took leaves the wait's state (a refused one
 * leaves the state as it was). So a resume sent again for an interrupt already answered the
 * same way is told apart from one answered otherwise. And whether a session still waits for
 * its first request.
 */
import { REQUEST_TAG } from '../../blackboard/blackboard.js';
import type { SessionContext } from '../../machines/session.context.js';
import type { SessionView } from '../../runtime/view.js';
import type { JournalEntry, SessionStore } from '../../store/session-store.js';
import { answerOf, sameAnswer } from './interrupts.js';

const PAGE = 1000;

/** The session's whole journal, in seq order. */
export async function readJournal(store: SessionStore, id: string): Promise<JournalEntry[]> {
  const all: JournalEntry[] = [];
  for (;;) {
    const page = await store.journal(id, { afterSeq: all.at(-1)?.seq ?? 0, limit: PAGE });
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

/** The user event that answered wait number `wait` (an entry that names it and left its state), if one did. */
export function answerOfWait(entries: readonly JournalEntry[], wait: number): JournalEntry | undefined {
  for (let i = 1; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.kind === 'event' && (entry.payload as { wait?: unknown } | null)?.wait === wait && entry.state !== entries[i - 1]!.state) return entry;
  }
  return undefined;
}

/** Whether the session still waits for its first request (a new thread or context): a user message is that request. */
export function waitsForFirstRequest(view: SessionView, context: SessionContext): boolean {
  return view.waitingReason === 'intake' && !Object.hasOwn(context.blackboard, REQUEST_TAG);
}

/**
 * How an answer for wait `wait` relates to what the journal holds: that wait was answered with
 * this same answer (a repeat: nothing to send), answered otherwise, or not answered at all.
 *
 * @example
 * const closed = await closedWaitAnswer(store, id, 3, { approved: false, reason: 'No.' });
 * if (closed === 'same') return reportAsItIs();
 */
export async function closedWaitAnswer(store: SessionStore, id: string, wait: number, payload: unknown): Promise<'same' | 'other' | 'unanswered'> {
  const answered = answerOfWait(await readJournal(store, id), wait);
  if (!answered) return 'unanswered';
  return sameAnswer(answerOf(answered.payload as Record<string, unknown>), payload) ? 'same' : 'other';
}
