/**
 * Forking a session at a journal entry: its state after entry `atSeq` is rebuilt by
 * replaying the journal prefix through the pure machine (journal-replay.ts, as time travel
 * does), given the fork's id and `forkedFrom`, and saved as a new session whose first
 * journal entry ("forked") holds that starting snapshot. Only the prefix is read, so nothing
 * the original wrote after `atSeq` reaches the fork, and nothing of the original is written.
 */
import { SessionNotFoundError, UserError } from '../core/errors.js';
import { snapshotState } from '../core/machines/refusals.js';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import type { ArchiveItemInput, JournalEntryInput, SessionStore } from '../store/session-store.js';
import { historyItems } from './archive.js';
import { replayStep, startOf, type ForkedPayload, type ReplayHost } from './journal-replay.js';
import { sessionEnvelope, storedSnapshot, type PersistedSession } from './persisted.js';

export interface Fork {
  packageId: string | null;
  persisted: PersistedSession;
  entry: JournalEntryInput;
  snapshot: SessionSnapshot;
}

/** The original's state after entry `atSeq`, as the fork starts from it (not yet saved). */
export async function makeFork(host: ReplayHost, store: SessionStore, id: string, atSeq: unknown, forkId: string): Promise<Fork> {
  const stored = await store.load(id);
  if (!stored) throw new SessionNotFoundError(id);
  const valid = typeof atSeq === 'number' && Number.isInteger(atSeq) && atSeq >= 1;
  // One read: the first atSeq entries; fewer than that means atSeq is past the journal's end
  // (the whole journal is read only to name its length in the error).
  const entries = await store.journal(id, valid ? { limit: atSeq } : {});
  if (!valid || entries.length < atSeq) {
    throw new UserError(
      `forkSession: atSeq must be a journal entry of "${id}", a whole number from 1 to ${entries.length} ` +
        `(got ${String(atSeq)}). See the entries with \`steward log ${id}\`.`,
    );
  }
  const current = storedSnapshot(host.machine, stored).context;
  let snapshot = startOf(host, forkId, entries[0]!, current);
  // The fork's own history (archive): what each replayed event added, as the live session
  // archived it (historyItems on consecutive contexts), up to atSeq and nothing after.
  const added: ArchiveItemInput[] = historyItems(null, snapshot.context);
  for (const entry of entries.slice(1)) {
    const before = snapshot.context;
    snapshot = replayStep(host.machine, snapshot, entry);
    added.push(...historyItems(before, snapshot.context));
  }
  const state = snapshotState(snapshot);
  if (state !== entries[atSeq - 1]!.state) {
    throw new UserError(
      `Session "${id}" cannot be forked at entry ${atSeq}: replaying its journal gives ${state}, the ` +
        `journal recorded ${entries[atSeq - 1]!.state} (the machine changed since it was written). Fork at ` +
        `an earlier entry, or use the Steward version that wrote it.`,
    );
  }
  const { context } = snapshot;
  const forkedFrom = { id, seq: atSeq };
  // The fork's own identity; everything else is the original's state at atSeq. The replayed
  // snapshot is kept (not resolved again) so that an invoked model call that was in flight
  // is among its children, and runs again when the fork is opened.
  const forked = { ...snapshot, context: { ...context, sessionId: forkId, ledger: { ...context.ledger, forkedFrom } } };
  const persisted = sessionEnvelope(host.machine, forked);
  const packageId = context.package?.id ?? null;
  const payload: ForkedPayload = { forkedFrom, packageId, snapshot: persisted };
  return { packageId, persisted, snapshot: forked, entry: { kind: 'created', type: 'forked', payload, state, added } };
}
