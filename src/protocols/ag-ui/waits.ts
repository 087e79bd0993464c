/**
 * Where a session's waits are in its journal: the entry that entered the wait it is in now
 * (its interrupt id), and the user event that answered an earlier one (so that a resume sent
 * twice is answered from the journal instead of being sent again). Every accepted user event
 * leaves the wait it answers (the chart has no self-transition on a wait), and a refused one
 * leaves the state as it was, so a wait is a run of entries with one state.
 */
import type { JournalEntry, SessionStore } from '../../store/session-store.js';

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

/** The seq of the entry that entered the state the session is in now (its last entry's state). */
export function currentWaitSeq(entries: readonly JournalEntry[]): number {
  let seq = entries[0]?.seq ?? 1;
  for (let i = 1; i < entries.length; i++) if (entries[i]!.state !== entries[i - 1]!.state) seq = entries[i]!.seq;
  return seq;
}

/** The user event that answered the wait entered at `seq` (the entry that left its state), if it was answered. */
export function answerOfWait(entries: readonly JournalEntry[], seq: number): JournalEntry | undefined {
  const start = entries.findIndex((e) => e.seq === seq);
  if (start < 0) return undefined;
  const state = entries[start]!.state;
  if (!state.startsWith('waiting_user.')) return undefined;
  for (let i = start + 1; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.state !== state) return entry.kind === 'event' ? entry : undefined;
  }
  return undefined;
}
