/**
 * The journal side of a live session: what its actor did, kept where it can be read back.
 * - `SessionJournal` (a session with a store): each user event and turn result the actor
 *   took becomes a journal entry, with what it added to the history (the archive), written
 *   with the snapshot in one `store.append`; writes are chained (the journal keeps the order
 *   of events) and fenced by the session's lease.
 * - `MemoryHistory` (no store): what left the context is kept in memory, so the whole
 *   history stays readable.
 * `Session` decides when a write must be durable (`acknowledge`); this file decides how.
 */
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import { clip } from '../core/limits.js';
import { snapshotState } from '../core/machines/refusals.js';
import type { SessionContext } from '../core/machines/session.context.js';
import { redactSecrets } from '../core/models/redact.js';
import { performance } from 'node:perf_hooks';
import { ConflictError, SessionLeasedError, SessionNotFoundError } from '../core/errors.js';
import type {
  ArchiveItemInput,
  JournalEntryInput,
  LeasedLoad,
  SendKeyInput,
  SessionStore,
  StoredDeadline,
  StoredPackageVersion,
} from '../store/session-store.js';
import type { OutboxInput } from '../store/outbox.js';
import { droppedItems, historyItems, type ArchiveReader, type MemoryArchive } from './archive.js';
import type { SessionLeasing } from './session-lease.js';

/** The journal's entry kind of an event the actor took; undefined: not journalled (XState's own events). */
function journalKind(type: string): JournalEntryInput['kind'] | undefined {
  if (type.startsWith('user_') || type === 'package_upgraded' || type === 'deadline_passed') return 'event';
  if (type.startsWith('xstate.done.actor.') || type.startsWith('xstate.error.actor.')) return 'actor';
  return undefined;
}

/** Events as JSON: an actor error becomes its message, secrets masked (Error objects do not serialise). */
function eventPayload(event: { type: string; error?: unknown }): unknown {
  if (event.error instanceof Error) return { ...event, error: { name: event.error.name, message: redactSecrets(event.error.message) } };
  if (event.error !== undefined) return { ...event, error: redactSecrets(String(event.error)) };
  return event;
}

export interface SessionJournalOptions {
  id: string;
  store: SessionStore;
  /** The stored revision the session was loaded (or created) at. */
  revision: number;
  /** Stores with leases: every write is fenced by the session's current lease. */
  leasing?: SessionLeasing;
  /** The context whose history is already archived (null: none of it is). */
  archivedFrom: SessionContext | null;
  /** How long a journalled refusal message may be (limits.refusalMessageChars). */
  refusalMessageChars: number;
  /** The actor's persisted snapshot, in Steward's envelope: what each write saves. */
  persisted: () => unknown;
  /** Whether the actor waits for the user or ended: such a write is what a person is shown. */
  atRest: () => boolean;
  /** Whether no other work of the session follows the one under way: only then may a write give the lease up. */
  lastWork: () => boolean;
  /** A write failed (another writer won, or the store failed): the actor must stop at once. */
  onWriteFailed: () => void;
  /** The open wait's deadline as the write saves it (session-deadline.ts): kept in the store with the snapshot. */
  deadline: () => StoredDeadline | null;
  /** The webhook messages of what the chart emitted since the last entry, the session at `snapshot` (webhook-notices.ts). */
  webhookMessages?: (snapshot: SessionSnapshot) => OutboxInput[] | undefined;
}

export class SessionJournal {
  private revisionNow: number;
  private writes: Promise<void> | null = null;
  /** Journal entries not yet handed to the store. */
  private unwritten: JournalEntryInput[] | null = null;
  private writeError: unknown = null;
  /** The next write ends a send() (a refusal): it must be durable, whatever the state. */
  private acknowledging = false;
  /** The context whose history is archived (or handed to the store with the next write). */
  private archivedContext: SessionContext | null;
  /** History items not yet attached to a journal entry. */
  private unarchived: ArchiveItemInput[] | null = null;
  /** The idempotency key of the send under way: goes with the next event entry. */
  private pendingKey: SendKeyInput | null = null;
  /** The last key whose entry the store took. */
  private writtenKey: string | null = null;
  /** Package versions the next write's snapshot is pinned to. */
  private versions: StoredPackageVersion[] | null = null;
  /** Set as the actor stops: what the writes still queued save instead of the stopped actor. */
  private lastActive: unknown = null;
  /** Told whether the next write committed (nextWrite). */
  private writeWaiters: ((committed: boolean) => void)[] = [];

  constructor(private readonly options: SessionJournalOptions) {
    this.revisionNow = options.revision;
    this.archivedContext = options.archivedFrom;
  }

  get store(): SessionStore {
    return this.options.store;
  }

  /** The store's revision after the last write of this session. */
  get revision(): number {
    return this.revisionNow;
  }

  readonly read: ArchiveReader = (kind, key, options) => this.options.store.archived(this.options.id, kind, key, options);

  /** Resolves when the writes queued so far are done (never rejects: a failure is kept for flush()). */
  written(): Promise<void> | null {
    return this.writes;
  }

  /** The send under way has this idempotency key: it is journalled with the send's event entry (null: none). */
  expectKey(key: SendKeyInput | null): void {
    this.pendingKey = key;
  }

  /** Whether a write failed (the actor is stopped; flush() throws it). */
  get failed(): boolean {
    return this.writeError !== null;
  }

  /** Resolves once the next write is made (true) or refused (false). */
  nextWrite(): Promise<boolean> {
    return new Promise((resolve) => this.writeWaiters.push(resolve));
  }

  /** Whether the store took the entry journalled with `key` (so the key is spent). */
  keyWritten(key: string): boolean {
    return this.writtenKey === key && this.writeError === null;
  }

  /** Keeps these package versions (once per store) with the next write. */
  keepVersions(versions: readonly StoredPackageVersion[]): void {
    if (versions.length) (this.versions ??= []).push(...versions);
  }

  /** Takes what the context added to the history since the last call, for the next write. */
  archive(context: SessionContext): void {
    const before = this.archivedContext;
    if (context === before) return;
    this.archivedContext = context;
    const added = historyItems(before, context);
    if (added.length) (this.unarchived ??= []).push(...added);
  }

  /** A snapshot of the session's actor, after `event`: journalled when the event is a user event or a turn result. */
  record(event: { type: string; error?: unknown }, snapshot: SessionSnapshot): void {
    const before = this.archivedContext;
    this.archive(snapshot.context);
    const kind = journalKind(event.type);
    if (!kind) return;
    const added = this.unarchived;
    this.unarchived = null;
    // A refusal changes nothing but the refusal log: a refused send spends no idempotency key
    // (else refused sends would push the keys of real ones out of the kept few).
    const refused = before !== null && snapshot.context.rejections !== before.rejections;
    const key = kind === 'event' ? this.takeKey() : null;
    const sendKey = refused ? null : key;
    const outbox = this.options.webhookMessages?.(snapshot);
    this.push({
      kind,
      type: event.type,
      payload: eventPayload(event),
      state: snapshotState(snapshot),
      ...(added ? { added } : {}),
      ...(sendKey ? { sendKey } : {}),
      ...(outbox ? { outbox } : {}),
    });
  }

  /**
   * A refusal decided before the machine saw the event (malformed, over a limit, session
   * done), journalled like the machine's own: the event's type and the refusal, never its
   * (possibly huge or malformed) fields. Resolves once durable; throws a failed write.
   */
  async refusal(raw: unknown, code: string, message: string, state: string): Promise<void> {
    const type = (raw as { type?: unknown } | null)?.type;
    const entryType = typeof type === 'string' && type.length <= 100 ? type : 'invalid_event';
    // A refused send spends no idempotency key.
    this.takeKey();
    this.push({
      kind: 'event',
      type: entryType,
      payload: { type: entryType, refused: { code, message: clip(message, this.options.refusalMessageChars) } },
      state,
    });
    await this.acknowledge();
  }

  /**
   * The actor is about to stop, with `persisted` its snapshot now (still running, a model call
   * in flight among its children). The writes still queued save that one: a stopped actor's
   * snapshot has no children and would resume as a session that never runs again.
   */
  stopping(persisted: unknown): void {
    this.lastActive ??= persisted;
  }

  /** The next write ends a send(): it is made durable; resolves once it is (throws a failed write). */
  async acknowledge(): Promise<void> {
    this.acknowledging = true;
    await this.flush();
  }

  /** Waits for the queued writes; throws the error of a failed one (once). */
  async flush(): Promise<void> {
    await this.writes;
    if (this.writeError) {
      const error = this.writeError;
      this.writeError = null;
      throw error;
    }
  }

  private takeKey(): SendKeyInput | null {
    const key = this.pendingKey;
    this.pendingKey = null;
    return key;
  }

  private push(entry: JournalEntryInput): void {
    (this.unwritten ??= []).push(entry);
    // Writes are chained so the journal keeps the order of events. Events that arrive while a
    // write is under way go together in the next one, with the snapshot as it is then: one
    // transaction for all of them, and one snapshot instead of one per event.
    if (this.unwritten.length === 1) this.writes = (this.writes ?? Promise.resolve()).then(() => this.writeUnwritten());
  }

  /** Tells those waiting for the next write how it ended. */
  private settled(committed: boolean): void {
    const waiters = this.writeWaiters;
    this.writeWaiters = [];
    for (const resolve of waiters) resolve(committed);
  }

  private async writeUnwritten(): Promise<void> {
    const entries = this.unwritten;
    this.unwritten = null;
    if (this.writeError || !entries?.length) return this.settled(false);
    this.settled(await this.write(entries));
  }

  /** One write of `entries` with the snapshot as it is now; false when it failed (kept for flush()). */
  private async write(entries: JournalEntryInput[]): Promise<boolean> {
    const { store, id, leasing } = this.options;
    // What a person is shown — a wait, the end, a refusal — is durable before send()
    // resolves, and makes every write before it durable too; a write inside a model loop
    // need not be (a power loss then loses only rounds no send() acknowledged; resume runs
    // them again). See docs/design.md §8, "Durability".
    const atRest = this.options.atRest();
    const durable = this.acknowledging || atRest;
    this.acknowledging = false;
    const lease = leasing?.current;
    const packageVersions = this.versions;
    this.versions = null;
    // The write that saves the session at rest ends its run: it may give the lease up as well,
    // one round trip instead of a second statement after it (SessionLeasing.giveUpWithWrite).
    const releaseLease = lease !== undefined && atRest && this.lastActive === null && this.options.lastWork() && leasing!.giveUpWithWrite();
    // No lease held by a session kept loaded between runs (SessionLeasing.grantWanted): this
    // write takes one in its own statement, and answers with the session as stored when it
    // was behind. A write at rest gives that grant up at once (it needs none).
    const grant = lease === undefined && this.lastActive === null ? (leasing?.grantWanted() ?? null) : null;
    const input = {
      id,
      expectedRevision: this.revisionNow,
      entries,
      snapshot: this.lastActive ?? this.options.persisted(),
      deadline: this.options.deadline(),
      ...(lease ? { lease } : {}),
      ...(releaseLease ? { releaseLease } : {}),
      ...(durable ? {} : { durable: false }),
      ...(packageVersions ? { packageVersions } : {}),
    };
    try {
      if (grant && store.leases) {
        const askedAt = performance.now();
        const written = await store.leases.appendAcquiring({ ...input, ...(atRest ? { releaseLease: true } : {}) }, grant.owner, grant.ms);
        if (written.stale) {
          leasing!.notGranted(written.stale, askedAt);
          throw notWritten(id, this.revisionNow, written.stale);
        }
        leasing!.granted(atRest ? null : written.lease, askedAt);
        this.revisionNow = written.revision;
      } else this.revisionNow = await store.append(input);
      if (releaseLease) leasing!.gaveUp(true);
      if (lease || grant) leasing!.wrote();
      const keyed = entries.find((e) => e.sendKey)?.sendKey;
      if (keyed) this.writtenKey = keyed.key;
      return true;
    } catch (error) {
      if (releaseLease) leasing!.gaveUp(false);
      // Another writer won (ConflictError) or the store failed: stop at once, so this
      // process never runs on a state it could not save. The store still holds the last
      // good state; resume from it.
      this.writeError = error;
      this.options.onWriteFailed();
      return false;
    }
  }
}

/** Why a write that was to take the lease was not made: another process holds it, or wrote the session since. */
function notWritten(id: string, revision: number, stale: LeasedLoad): Error {
  if (!stale.stored) return new SessionNotFoundError(id);
  if (!stale.lease && stale.holder) return new SessionLeasedError(id, stale.holder.owner, stale.holder.expiresInMs);
  return new ConflictError(
    `Session "${id}" was changed by another process since this object last wrote it (revision ${revision} → ${stale.stored.revision}): ` +
      'nothing was written. Open it again with runtime.resumeSession(id).',
  );
}

/** A session without a store: its archive lives in memory; the context holds the rest. */
export class MemoryHistory {
  constructor(
    private readonly memory: MemoryArchive,
    /** The context whose dropped history is archived already (null: take the first one seen as the start). */
    private context: SessionContext | null,
  ) {}

  readonly read: ArchiveReader = (kind, key, options) => this.memory.read(kind, key, options);

  /** Keeps what left the context since the last call (the context holds the rest). */
  keep(context: SessionContext): void {
    const before = this.context;
    if (context === before) return;
    this.context = context;
    if (before) this.memory.add(droppedItems(before, context));
  }
}
