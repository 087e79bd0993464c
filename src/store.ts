/**
 * `steward/store`: what it takes to write a store of your own — the `SessionStore` interface
 * and the records it reads and writes (sessions, journal entries, the archive, idempotency
 * keys, package versions, pages of sessions, deadlines), the optional leases and event bus a shared
 * store adds, and how many send keys a store keeps. An app that only picks a store needs
 * none of it: `MemoryStore` and `SqliteStore` come from `steward`, `PostgresStore` from
 * `steward/postgres`, and `createRuntime({ store })` takes any `SessionStore`. The errors a
 * store throws (ConflictError, SessionNotFoundError, StoreError, LeaseLostError…) are
 * `steward`'s, like every error.
 *
 * @example
 * import { createRuntime, ConflictError } from 'steward';
 * import type { AppendInput, SessionStore, StoredSession } from 'steward/store';
 *
 * class MyStore implements SessionStore {
 *   async append({ id, expectedRevision, entries, snapshot }: AppendInput): Promise<number> {
 *     const stored: StoredSession | undefined = await this.load(id);
 *     if (stored?.revision !== expectedRevision) throw new ConflictError(`Session ${id} changed since revision ${expectedRevision}.`);
 *     // …write the entries and the snapshot in one transaction, then:
 *     return expectedRevision + 1;
 *   }
 *   // …create, load, journal, list, dueDeadlines, archived, packageVersion, sendKey, saveSendResult
 * }
 * const runtime = createRuntime({ model, store: new MyStore() });
 */
export {
  SEND_KEYS_KEPT,
  type SessionStore,
  type StoredSession,
  type StoredDeadline,
  type DueDeadline,
  type CreateInput,
  type AppendInput,
  type AppendOptions,
  type Durability,
  type JournalEntry,
  type JournalEntryInput,
  type ArchiveItem,
  type ArchiveItemInput,
  type SendKeyInput,
  type SendKeyRecord,
  type StoredPackageVersion,
  type ListOptions,
  type ListAccess,
  type SessionPage,
  type SessionSummary,
  type SessionChange,
  type WatchOptions,
  type Lease,
  type LeaseOps,
  type LeaseHolder,
  type LeasedLoad,
  type ClaimedLease,
  type EventBus,
} from './store/session-store.js';
export type { HolderProcess } from './store/holder-process.js';
export type { OutboxClaim, OutboxInput, OutboxMessage, OutboxOps, OutboxStatus } from './store/outbox.js';
