/**
 * The decision that answered a closed wait, from the journal: every user event the session
 * took while it waited is journalled with the number of the wait it answered (`wait`: the
 * one it named, or the open one, stamped by `session.send()`), and the entry of the one the
 * chart took leaves the wait's state (a refused one leaves the state as it was). So a decision
 * sent again for a wait it already answered is told apart from another decision for it.
 */
import type { JournalEntry, SessionStore } from '../store/session-store.js';

const PAGE = 1000;

/**
 * The session's whole journal, in seq order (read only on the rare path of a decision for a closed wait).
 *
 * @example
 * const entries = await readJournal(store, id);
 */
export async function readJournal(store: SessionStore, id: string): Promise<JournalEntry[]> {
  const all: JournalEntry[] = [];
  for (;;) {
    const page = await store.journal(id, { afterSeq: all.at(-1)?.seq ?? 0, limit: PAGE });
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

/**
 * The user event that answered wait number `wait` (an entry that names it and left its state), if one did.
 *
 * @example
 * const answer = answerOfWait(await readJournal(store, id), 3); // the entry of the decision that closed wait 3
 */
export function answerOfWait(entries: readonly JournalEntry[], wait: number): JournalEntry | undefined {
  for (let i = 1; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.kind === 'event' && (entry.payload as { wait?: unknown } | null)?.wait === wait && entry.state !== entries[i - 1]!.state) return entry;
  }
  return undefined;
}
