/**
 * What the protocols ask of a session's waits: whether a resume or an answer for a closed wait
 * (or for an item of a fan-out already decided) repeats the answer the journal holds for it
 * (runtime/journal-waits.ts finds that entry), and whether a session still waits for its first
 * request.
 */
import { REQUEST_TAG } from '../../core/blackboard/blackboard.js';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { SessionView } from '../../core/view.js';
import { answerOfWait } from '../../runtime/journal-waits.js';
import type { JournalEntry } from '../../store/session-store.js';
import { answerOf, sameAnswer } from './interrupts.js';
import { ITEM_FIELDS } from './interrupt-ids.js';

/** Whether the session still waits for its first request (a new thread or context): a user message is that request. */
export function waitsForFirstRequest(view: SessionView, context: SessionContext): boolean {
  return view.waitingReason === 'intake' && !Object.hasOwn(context.blackboard, REQUEST_TAG);
}

/**
 * How an answer for wait `wait` relates to what the journal holds (`entries`, read once by
 * the caller): that wait was answered with this same answer (a repeat: nothing to send),
 * answered otherwise, or not answered at all. An answer that names an item of a fan-out
 * (`item`, or `artifactId` in a review) is compared with the decisions on that item alone.
 *
 * @example
 * const closed = closedWaitAnswer(await readJournal(store, id), 3, { approved: false, reason: 'No.' });
 * if (closed === 'same') return reportAsItIs();
 */
export function closedWaitAnswer(entries: readonly JournalEntry[], wait: number, payload: unknown): 'same' | 'other' | 'unanswered' {
  const item = itemNamedBy(payload);
  if (item) return itemAnswer(entries, wait, item, payload);
  const answered = answerOfWait(entries, wait);
  if (!answered) return 'unanswered';
  return sameAnswer(answerOf(answered.payload as Record<string, unknown>), payload) ? 'same' : 'other';
}

type ItemName = { field: (typeof ITEM_FIELDS)[number]; id: string };

/** The item an answer names, if it names one. */
function itemNamedBy(payload: unknown): ItemName | null {
  if (payload === null || typeof payload !== 'object') return null;
  for (const field of ITEM_FIELDS) {
    const id = (payload as Record<string, unknown>)[field];
    if (typeof id === 'string') return { field, id };
  }
  return null;
}

/** An answer with the item it names left out: what it says about that item. */
const withoutItem = (answer: unknown): unknown =>
  answer !== null && typeof answer === 'object'
    ? Object.fromEntries(Object.entries(answer).filter(([k]) => !(ITEM_FIELDS as readonly string[]).includes(k)))
    : answer;

/**
 * How an answer relates to the decisions the journal holds on one item of wait `wait`. Each
 * item is decided once, and a decision that does not end the wait leaves its state as it was
 * (applied or refused alike), so the journal cannot tell the applied decision from a refused
 * one: the answer is a repeat only when every decision journalled on the item says the same.
 */
function itemAnswer(entries: readonly JournalEntry[], wait: number, item: ItemName, payload: unknown): 'same' | 'other' | 'unanswered' {
  const said = entries.flatMap((entry) => {
    const event = entry.payload as Record<string, unknown> | null;
    if (entry.kind !== 'event' || event?.wait !== wait || event[item.field] !== item.id) return [];
    const answer = answerOf(event);
    return answer === undefined ? [] : [withoutItem(answer)];
  });
  if (said.length === 0) return 'unanswered';
  const asked = withoutItem(payload);
  return said.every((answer) => sameAnswer(answer, asked)) ? 'same' : 'other';
}
