/**
 * Where sessions live between events. One interface, several backends (memory for tests,
 * SQLite by default); one shared spec in test/store/session-store.spec.ts runs on each.
 *
 * Every accepted event (or actor result) is appended to the session's journal and the
 * session's persisted snapshot is replaced *in the same transaction*; `revision` is the
 * optimistic-concurrency token: a writer that read revision r may only write r + 1.
 *
 * The snapshot is bounded (windows of the transcripts, the latest tag bodies); what an event
 * added to the session's history — transcript messages, tag versions — goes to the archive
 * in that same transaction, so everything ever written stays readable without the snapshot
 * growing with the session.
 */

import { UserError } from '../core/errors.js';
import { quotedSetting } from '../core/limits.js';
import type { JournalEntry, JournalEntryFields, SessionSummary } from './records.js';
import type { HolderProcess } from './holder-process.js';
import type { OutboxInput, OutboxOps } from './outbox.js';
import type { ListAccess } from './participants.js';
import type { DueDeadline, StoredDeadline } from './stored-deadline.js';

export type { JournalEntry, SessionSummary, ListAccess, DueDeadline, StoredDeadline };

import type { StoredPackageVersion } from '../skills/package-version.js';

export type { StoredPackageVersion };

/**
 * How many idempotency keys a store keeps per session: the most recent ones by journal entry
 * (a count, not a time, so a session idle for a month still knows its last sends). A key
 * older than that is forgotten, and a send with it counts again.
 */
export const SEND_KEYS_KEPT = 100;

/** An idempotency key journalled with the entry of the event it was sent with. */
export interface SendKeyInput {
  key: string;
  /** sha256 of the event as sent (canonical JSON, without the runtime's `at`): a key reused for another event is told apart. */
  fingerprint: string;
}

/** A journalled idempotency key, and the result of its send once that send resolved. */
export interface SendKeyRecord extends SendKeyInput {
  /** The journal entry of the event sent with the key. */
  seq: number;
  /** What the send resolved with (JSON), or null while it runs (or when its process stopped before it resolved). */
  result: unknown;
}

/**
 * When a store's commits reach the disk (see docs/design.md §8, "Durability"):
 * - 'acknowledged' (default): a write that ends a `send()` (the wait, done, a refusal)
 *   and every write without `durable: false` is flushed to disk before it resolves, and with
 *   it every write before; the commits inside a model loop (`durable: false`) are not
 *   (SQLite: `synchronous=NORMAL`; PostgreSQL: `synchronous_commit=off`): they survive a
 *   crash of the process, and a power loss (or a database server crash) loses at most the
 *   rounds since the last acknowledged write, which `steward resume` runs again.
 * - 'every-event': every commit is flushed (one fsync per journalled event).
 * - 'process': no session write is flushed by the store (SQLite `synchronous=NORMAL` for
 *   every commit; PostgreSQL `synchronous_commit=off` for every append — its `create`, leases
 *   and migrations stay synchronous, they are rare): what was written survives a crash of the process,
 *   not of the machine; a power loss can lose acknowledged writes (for scratch stores, tests,
 *   and for measuring Steward's own cost beside a baseline that writes to no disk).
 */
export const DURABILITIES = ['acknowledged', 'every-event', 'process'] as const;
export type Durability = (typeof DURABILITIES)[number];

/** Whether a commit is flushed to disk before it resolves, under `durability`. */
export function flushesCommit(durability: Durability, options: AppendOptions = {}): boolean {
  return durability === 'every-event' || (durability === 'acknowledged' && options.durable !== false);
}

const isDurability = (value: unknown): value is Durability => (DURABILITIES as readonly unknown[]).includes(value);
const durabilityList = () => DURABILITIES.map((d) => `"${d}"`).join(' or ');

/** A store's `durability` option, checked (default 'acknowledged'); `store` names the store in the error. */
export function durabilityOption(value: Durability | undefined, store: string): Durability {
  if (value === undefined) return 'acknowledged';
  if (isDurability(value)) return value;
  throw new UserError(`${store} durability "${String(value)}" is unknown: use ${durabilityList()}.`);
}

/** `STEWARD_DURABILITY` for the CLI and `steward serve`; unset or empty: 'acknowledged'. */
export function durabilityFromEnv(env: NodeJS.ProcessEnv = process.env): Durability {
  const value = env.STEWARD_DURABILITY;
  if (!value) return 'acknowledged';
  if (isDurability(value)) return value;
  throw new UserError(
    `STEWARD_DURABILITY is ${quotedSetting(value)}, which is not a durability. Set it to ${durabilityList()}, or unset it (default "acknowledged").`,
  );
}

/** Who acted in a journal entry's payload: a user event's `by`, when it is a string. */
export function userOf(payload: unknown): string | undefined {
  const by = (payload as { by?: unknown } | null)?.by;
  return typeof by === 'string' ? by : undefined;
}

/** One thing a journalled event added to the session's history. */
export interface ArchiveItemInput {
  /** 'message': a transcript message (key: "manager" or "worker"); 'version': a tag version (key: the tag). */
  kind: 'message' | 'version';
  key: string;
  /** The message's number in its transcript (0-based, never reused), or the version number. */
  n: number;
  /** The message or the tag version, JSON-serialisable. */
  value: unknown;
}

export interface ArchiveItem extends ArchiveItemInput {
  /** The journal entry that added it (the latest entry at the time, for items written without one). */
  entrySeq: number;
}

export interface JournalEntryInput extends JournalEntryFields {
  /** What the event added to the session's history: written to the archive, not the journal row. */
  added?: ArchiveItemInput[];
  /** The idempotency key the event was sent with: kept (SEND_KEYS_KEPT per session) with this entry's seq. */
  sendKey?: SendKeyInput;
  /** Webhook messages this entry's event caused (one per receiver): written to the outbox in the same transaction (outbox.ts). */
  outbox?: OutboxInput[];
}

export interface StoredSession {
  id: string;
  packageId: string | null;
  /** Incremented by every successful write; the first write is revision 1. */
  revision: number;
  /** The snapshot envelope as saved (JSON-serialisable; validated by the runtime on load). */
  snapshot: unknown;
  createdAt: string;
  updatedAt: string;
  /** The name of the caller who created it; null when no named caller did (src/store/participants.ts). */
  owner: string | null;
  /** People (names) and groups (`group:NAME`) who see and decide it besides its owner, in the order given. */
  participants: string[];
  /** The open wait's next deadline (stored-deadline.ts), as the last write that set it left it; null: none. */
  deadline: StoredDeadline | null;
}

export interface ListOptions {
  /** Sessions per page: 1 to LIST_MAX_LIMIT (1,000); default LIST_DEFAULT_LIMIT (100). */
  limit?: number;
  /** Where to go on: the `next` of the previous page (opaque); none or null: the first page. */
  after?: string | null;
  /**
   * Only the sessions `visibleTo.owner` owns or whose participants include one of
   * `visibleTo.participants` (a caller's name and its groups as `group:NAME`: `visibleTo()` of
   * participants.ts), filtered in the store's query so that paging stays a keyset walk; none:
   * every session.
   */
  visibleTo?: ListAccess;
}

export interface SessionPage {
  sessions: SessionSummary[];
  /** The cursor of the next page (pass it as `after`), or null when this page is the last. */
  next: string | null;
}

/** What `watch` reports after a write: enough to tell whether a reader is behind. */
export interface SessionChange {
  sessionId: string;
  /** The session's revision after the write. */
  revision: number;
  /** The seq of its last journal entry after the write. */
  lastSeq: number;
  /** Its state after the write (dotted). */
  state: string;
}

export interface WatchOptions {
  /** Only this session's changes (default: every session's). */
  sessionId?: string;
  /** A lost connection (the store reconnects and re-announces what changed meanwhile) or a listener that threw. */
  onError?: (error: unknown) => void;
}

/** A process's hold on a session (PostgresStore leases): who, and which grant (the fencing token). */
export interface Lease {
  sessionId: string;
  owner: string;
  /** Incremented by every new grant of this session's lease: a stale holder's token no longer matches. */
  token: number;
}

/** What `LeaseOps.acquireAndLoad` found: the session, and the lease or who holds it. */
export type LeasedLoad =
  { stored: StoredSession; lease: Lease; holder?: undefined } | { stored: StoredSession | undefined; lease: null; holder: LeaseHolder | null };

/** How `LeaseOps.appendAcquiring` ended: written under the new lease, or not written (`stale`). */
export type AcquiringAppend = { revision: number; lease: Lease; stale?: undefined } | { stale: LeasedLoad; revision?: undefined; lease?: undefined };

/** The holder of a session's lease, as another process sees it. */
export interface LeaseHolder {
  /** The holder's own description, e.g. "steward send on web-3 pid 4711" (clipped to 200 characters). */
  owner: string;
  /** How long the lease lasts unless renewed (ms). */
  expiresInMs: number;
  /** Its grant (see Lease.token). */
  token: number;
  /**
   * The holder's process, so that a process on the same machine can tell whether it is gone
   * (holder-process.ts); null when the grant recorded none (not Linux, an older Steward).
   */
  process: HolderProcess | null;
}

export interface AppendOptions {
  /**
   * Fence the write with this lease: it commits only while the lease is held and unexpired
   * (LeaseLostError otherwise). Without one, a store with leases refuses the write while
   * another owner holds an unexpired lease on the session.
   */
  lease?: Lease;
  /**
   * With `lease`: the write also gives the lease up, in its own transaction, as
   * `LeaseOps.releaseLease` would after it (one round trip instead of two). For the last
   * write of a run, when the session waits or is done. A store without leases ignores it.
   */
  releaseLease?: boolean;
  /**
   * false: nobody is shown this write's outcome before a later write (a commit inside a model
   * loop; `send()` resolves only at the next wait). A store may then commit it without
   * forcing it to disk (SqliteStore: `synchronous=NORMAL`): it survives a crash of the
   * process, but a power loss or an OS crash may roll it back, together with every such
   * write after the last durable one. The next durable write makes all of them durable.
   * Default true: on disk before `append` resolves. Stores that always sync ignore it.
   */
  durable?: boolean;
}

/** One write of `SessionStore.append`: the session, the revision it was read at, and what to write. */
export interface AppendInput extends AppendOptions {
  id: string;
  /** The revision the writer read: the write commits only if the store still holds it. */
  expectedRevision: number;
  entries: JournalEntryInput[];
  /** The new snapshot envelope (JSON-serialisable), replacing the stored one. */
  snapshot: unknown;
  /** Archive items that belong to no new entry (a migrated snapshot's history). */
  archive?: ArchiveItemInput[];
  /** Package versions the new snapshot is pinned to: kept once per store (by hash), in the same transaction. */
  packageVersions?: StoredPackageVersion[];
  /**
   * The session's deadline after this write, in the same transaction and behind the same
   * revision and lease checks (a refused write leaves the stored one): undefined keeps the
   * stored one, null clears it, a value replaces it.
   */
  deadline?: StoredDeadline | null;
}

/** What `SessionStore.create` writes: the session, its first entry, and the package versions it is pinned to. */
export interface CreateInput {
  id: string;
  packageId: string | null;
  snapshot: unknown;
  entry: JournalEntryInput;
  /** Kept once per store (by hash), in the same transaction as the session. */
  packageVersions?: StoredPackageVersion[];
  /** The name of the caller who creates it (default null: no named caller). */
  owner?: string | null;
  /** People and groups (`group:NAME`) who see and decide it besides its owner (default none); checked by the runtime (ParticipantsSchema). */
  participants?: readonly string[];
  /** The deadline of the wait the session opens with (default null: none). */
  deadline?: StoredDeadline | null;
}

/** A lease a takeover scan claimed, with the session as it was when claimed. */
export interface ClaimedLease extends Lease {
  stored: StoredSession;
}

/**
 * Optional lease operations (PostgresStore). Every time is the database's `now()`, so server
 * clocks never matter. See docs/design.md "Leases and takeover".
 */
export interface LeaseOps {
  /**
   * Grants the lease for `ms` if nobody else holds an unexpired one (a new token each grant);
   * null otherwise. `goneToken`: the grant of a holder known to be gone (its process no longer
   * exists: holderGone): taken too though unexpired, in the same statement, only while it is
   * still exactly that grant.
   */
  acquireLease(sessionId: string, owner: string, ms: number, options?: { goneToken?: number }): Promise<Lease | null>;
  /**
   * `acquireLease` and `load` in one step (a server's send begins so): the session as it is
   * once the lease is granted, so nobody writes it after the read; without a grant, who holds
   * the lease. `stored` undefined: no such session (and no lease).
   */
  acquireAndLoad(sessionId: string, owner: string, ms: number): Promise<LeasedLoad>;
  /**
   * A write that starts a run, and its lease, in one step: made only when nobody holds an
   * unexpired lease and the store still holds `input.expectedRevision` (`input.lease` is
   * ignored); then the new revision and the lease, granted for `ms` (with `releaseLease`:
   * given up at once, a write at rest checked as a granting one is).
   * Not made: `stale`, as `acquireAndLoad` would answer now (the session as stored, and the
   * lease when it was free): the writer starts over from it. Throws SessionNotFoundError.
   */
  appendAcquiring(input: AppendInput, owner: string, ms: number): Promise<AcquiringAppend>;
  /** Extends the lease by `ms` from now; false when it was lost (expired and taken, or released). */
  renewLease(lease: Lease, ms: number): Promise<boolean>;
  /**
   * Gives the lease up: it expires at once, so any server may take a running session over
   * now. `unused`: the grant wrote nothing (it was taken only to look, and the session was
   * found running): the session's last write keeps counting as a write by no lease holder,
   * so a takeover still waits until it has been quiet for a whole lease.
   */
  releaseLease(lease: Lease, options?: { unused?: boolean }): Promise<void>;
  /**
   * Claims up to `limit` running sessions nobody holds a lease on whose runner is gone: the
   * last write was made under a lease that has expired since, or (written by a process
   * without a lease) it was over `ms` ago. Rows are locked FOR UPDATE SKIP LOCKED, so two
   * servers scanning at once never claim the same one. Returns the new leases, each with its
   * session as the claim found it (nobody writes it after that: the lease is held).
   */
  claimExpired(owner: string, ms: number, limit: number): Promise<ClaimedLease[]>;
  /** Who holds an unexpired lease on the session now, and for how much longer; null when nobody does. */
  holder(sessionId: string): Promise<LeaseHolder | null>;
}

/** Live events carried across processes (PostgresStore: NOTIFY on a per-store channel). */
export interface EventBus {
  /** Sends small JSON events of a session to every process listening; order is kept per publisher. */
  publishEvents(sessionId: string, events: unknown[]): void;
  /** Calls `listener` with each event published for `sessionId` (undefined: every session) by any process. Resolves once listening. */
  watchEvents(
    sessionId: string | undefined,
    listener: (event: unknown) => void,
    options?: { onError?: (error: unknown) => void },
  ): Promise<() => Promise<void>>;
  /** Resolves once every event published so far was handed to the other processes. */
  flush?(): Promise<void>;
}

export interface SessionStore {
  /** Creates the session at revision 1 with its first journal entry. Throws ConflictError if the id exists. */
  create(session: CreateInput): Promise<StoredSession>;
  /** The session, or undefined when there is none with that id. */
  load(id: string): Promise<StoredSession | undefined>;
  /**
   * Appends `entries` to the journal (and what they added to the archive) and replaces the
   * snapshot, atomically, if the stored revision still equals `expectedRevision`; returns the
   * new revision. Otherwise throws ConflictError and writes nothing. One options object (not
   * positional arguments) so that a store or a caller reads each field by its name.
   *
   * @example
   * const revision = await store.append({ id, expectedRevision: 3, entries, snapshot, durable: false });
   */
  append(input: AppendInput): Promise<number>;
  /**
   * Archived items of one kind and key, in `n` order; `from` / `to` bound `n` (inclusive).
   * A session without such items (or unknown) gives an empty list.
   */
  archived(id: string, kind: ArchiveItemInput['kind'], key: string, options?: { from?: number; to?: number }): Promise<ArchiveItem[]>;
  /** A package version by its hash (written with a session that is pinned to it), or undefined. */
  packageVersion(hash: string): Promise<StoredPackageVersion | undefined>;
  /** The idempotency key `key` of a session, when it is one of the SEND_KEYS_KEPT latest journalled; else undefined. */
  sendKey(id: string, key: string): Promise<SendKeyRecord | undefined>;
  /** Keeps what the send with `key` resolved with (JSON), for a repeat of that send; a key not journalled is ignored. */
  saveSendResult(id: string, key: string, result: unknown): Promise<void>;
  /** Journal entries in seq order; `afterSeq` skips the first ones, `limit` caps the count. */
  journal(id: string, options?: { afterSeq?: number; limit?: number }): Promise<JournalEntry[]>;
  /**
   * One page of sessions, most recently updated first (ties on `updatedAt`: by id,
   * descending). `after` is the `next` of the page before; `next` is null on the last page.
   * Paged by keyset on (updated_at, id), so a page costs its size, not the store's: a
   * session written between two pages moves to the front and is not shown twice. A cursor
   * no store handed out is an InvalidCursorError; to read every session, see `listAll`.
   */
  list(options?: ListOptions): Promise<SessionPage>;
  /**
   * Sessions whose deadline is due (`dueAt <= now`, an ISO-8601 UTC time), the longest due
   * first (ties by id), at most `limit` (1 to DUE_DEADLINES_MAX_LIMIT, 1,000; else UserError).
   * By an index of the sessions that have a deadline, so a scan costs what it finds. It only
   * reads: who fires a deadline is decided by who holds the session (PostgresStore: its lease,
   * taken with `acquireAndLoad` before firing).
   *
   * @example
   * for (const { sessionId, deadline } of await store.dueDeadlines(new Date().toISOString(), 100)) fire(sessionId, deadline);
   */
  dueDeadlines(now: string, limit: number): Promise<DueDeadline[]>;
  /**
   * Optional: reports every committed write, from any process on this store, as it happens
   * (PostgresStore: LISTEN/NOTIFY). Resolves once listening; the function it returns stops.
   * Stores without it (SQLite, memory) are polled by readers that need live updates.
   */
  watch?(listener: (change: SessionChange) => void, options?: WatchOptions): Promise<() => Promise<void>>;
  /** What kind of store this is ('sqlite', 'postgres', 'memory'): what a public health check may show of it. */
  readonly kind?: string;
  /** Optional: leases for several servers on one store (PostgresStore). */
  readonly leases?: LeaseOps;
  /** Optional: live events across processes (PostgresStore). */
  readonly events?: EventBus;
  /** Optional: the webhook outbox (every store of Steward's; without it a runtime with webhooks refuses the store). */
  readonly outbox?: OutboxOps;
  /**
   * Optional: true while an operation waits for a lock another process holds (SqliteStore,
   * which waits without blocking, so reads still answer). Absent means never.
   */
  readonly busy?: boolean;
  close(): Promise<void>;
}
