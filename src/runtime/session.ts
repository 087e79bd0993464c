/**
 * A live session: one actor of the session machine, its persistence, and `send()`, which
 * resolves when the session waits for the user again (or is done). A refused or malformed
 * event resolves `{ ok: false, error }` with state and context unchanged (but for the
 * refusal log); nothing escapes `send()` as an exception.
 */
import { type Actor, type AnyMachineSnapshot, type InspectionEvent, type Observer } from 'xstate';
import { ConflictError, LimitExceededError, StewardError, type RefusalDetails } from '../errors.js';
import { clip, DEFAULT_LIMITS, overLimitMessage, type Limits } from '../limits.js';
import { enabledUserEvents, snapshotState } from '../machines/refusals.js';
import type { SessionMachine } from '../machines/session.machine.js';
import { UserEventSchema, type UserEvent, type UserEventType } from '../machines/session.events.js';
import type { TagVersion } from '../blackboard/blackboard.js';
import type { SessionContext } from '../machines/session.context.js';
import type { ChatMessage } from '../models/model.js';
import { allTagVersions, droppedItems, fullTranscript, findTagVersion, historyItems, MemoryArchive, readVersions, type ArchiveReader, type TranscriptName } from './archive.js';
import { redactSecrets } from '../models/redact.js';
import { reservedActorProblem } from './reserved-names.js';
import type { ArchiveItemInput, JournalEntryInput, SessionStore } from '../store/session-store.js';
import { SessionEventHub } from './event-hub.js';
import { SessionEventStream } from './event-stream.js';
import { envelope } from './persisted.js';
import { leaseForSend, type SessionLeasing } from './session-lease.js';
import { isoNow } from './iso-now.js';
import type { SessionEventListener, SessionStreamEvent, SubscribeOptions } from './session-events.js';
import { sessionView, type SessionView } from './view.js';

/** Why send() did not take an event: a refusal says by the chart what the state takes instead. */
export type SendError =
  | ({ code: 'event_refused'; message: string } & RefusalDetails)
  /** Another process holds the session's lease and runs it: `holder` is its own description. */
  | { code: 'session_running_elsewhere'; message: string; holder: string | null }
  | { code: string; message: string };

export type SendResult =
  | { ok: true; view: SessionView }
  | { ok: false; error: SendError; view: SessionView };

export interface Persistence {
  store: SessionStore;
  revision: number;
  /** Stores with leases (PostgresStore): the session's lease, which fences every write (session-lease.ts). */
  leasing?: SessionLeasing;
}

// The state value's top key, read directly: this runs on every snapshot (`matches` parses its argument each time).
const isWaitOrEnd = (s: AnyMachineSnapshot) => s.status !== 'active' || (typeof s.value === 'object' && Object.hasOwn(s.value, 'waiting_user'));

function journalKind(type: string): JournalEntryInput['kind'] | undefined {
  if (type.startsWith('user_')) return 'event';
  if (type.startsWith('xstate.done.actor.') || type.startsWith('xstate.error.actor.')) return 'actor';
  return undefined;
}

/** Events as JSON: an actor error becomes its message, secrets masked (Error objects do not serialise). */
function eventPayload(event: { type: string; error?: unknown }): unknown {
  if (event.error instanceof Error) return { ...event, error: { name: event.error.name, message: redactSecrets(event.error.message) } };
  if (event.error !== undefined) return { ...event, error: redactSecrets(String(event.error)) };
  return event;
}

/** The text of a user event (every string field, all answers together) over `max` characters. */
function overUserTextLimit(event: UserEvent, max: number): LimitExceededError | undefined {
  // A plain loop: this runs on every user event (no arrays built to sum a length).
  let size = 0;
  for (const key of Object.keys(event)) {
    // `by` and `via` have their own bound (the event schema); `at` is ours.
    if (key === 'type' || key === 'by' || key === 'via' || key === 'at') continue;
    const value = (event as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string') size += value.length;
    else if (value && typeof value === 'object') for (const v of Object.values(value as Record<string, string>)) size += v.length;
  }
  if (size <= max) return undefined;
  const message = `${overLimitMessage(`The text of ${event.type}`, size, 'userTextChars', max)} Nothing was sent; send a shorter text or raise the limit.`;
  return new LimitExceededError(message, 'userTextChars', max, size);
}

export class Session {
  readonly id: string;
  private actor!: Actor<SessionMachine>;
  private writes: Promise<void> | null = null;
  /** Journal entries not yet handed to the store. */
  private unwritten: JournalEntryInput[] | null = null;
  private writeError: unknown = null;
  /** The send in progress, if any: sends run one at a time, in call order. */
  private busy: Promise<void> | null = null;
  private fatal: unknown = null;
  /** The context whose history is archived (or handed to the store with the next write). */
  private archivedContext: SessionContext | null;
  /** History items not yet attached to a journal entry. */
  private unarchived: ArchiveItemInput[] | null = null;
  /** Without a store, the session's archive lives here. */
  private readonly memoryArchive: MemoryArchive | null;
  /** Callers of untilWaitOrEnd() waiting for the next wait, end or stop (one observer serves them all). */
  private waiters: (() => void)[] | null = null;
  /** A send() resolves after the next write (a refusal): it must be durable, whatever the state. */
  private acknowledging = false;
  /** Made on the first subscribe(): an idle session carries nothing for live events. */
  private events: SessionEventHub | null = null;
  /** sendNow() calls under way (at most one: send() queues them): the lease is not let go under one. */
  private sending = 0;

  /** @internal Use `runtime.createSession()` or `runtime.resumeSession()`. */
  constructor(
    id: string,
    start: (inspect: ((e: InspectionEvent) => void) | undefined) => Actor<SessionMachine>,
    private readonly persistence: Persistence | null,
    private readonly userInspect?: (e: InspectionEvent) => void,
    /** Called once when the actor ends (done, stopped or failed). */
    onEnd?: () => void,
    private readonly limits: Readonly<Limits> = DEFAULT_LIMITS,
    /**
     * `from`: the context whose history is already archived (null: none of it is; without a
     * store, the context the session starts from);
     * `memory`: the archive to keep, without a store (a migrated snapshot's history).
     */
    archive: { from: SessionContext | null; memory?: MemoryArchive } = { from: null },
  ) {
    this.id = id;
    this.archivedContext = archive.from;
    this.memoryArchive = persistence ? null : (archive.memory ?? new MemoryArchive());
    const inspect = persistence || userInspect ? (e: InspectionEvent) => this.onInspect(e) : undefined;
    this.actor = start(inspect);
    // What the start itself changed (an eventless step of a restored snapshot; a new session's seeds).
    if (this.memoryArchive && !this.archivedContext) this.archivedContext = this.actor.getSnapshot().context;
    else this.archive(this.actor.getSnapshot().context);
    // One observer for the session's life: the memory archive, the waiters of send() and
    // settled() (no subscription per send), and the end. Without an error observer XState
    // rethrows an actor's error asynchronously (a crash).
    const observer: Observer<AnyMachineSnapshot> = {
      next: (snapshot) => {
        if (this.memoryArchive) this.archive(snapshot.context as SessionContext);
        if (this.waiters && isWaitOrEnd(snapshot)) this.wake();
      },
      error: (err) => {
        this.fatal = err;
        onEnd?.();
        this.wake();
      },
      complete: () => {
        onEnd?.();
        this.wake();
      },
    };
    this.actor.subscribe(observer);
    const leasing = persistence?.leasing;
    if (leasing) {
      leasing.onLost(() => this.stop());
      // A resumed session that runs keeps the lease until it waits; one that waits lets it go now.
      void this.untilWaitOrEnd().then(() => this.letGoIfIdle());
    }
  }

  /** The machine's actor, for inspection and advanced embedding. */
  get actorRef(): Actor<SessionMachine> {
    return this.actor;
  }

  get revision(): number | undefined {
    return this.persistence?.revision;
  }

  view(): SessionView {
    return sessionView(this.actor.getSnapshot());
  }

  /**
   * Calls `listener` synchronously with each live event (rounds, tool checks, artifacts,
   * waits, text deltas…) until the returned function is called. See session-events.ts.
   */
  subscribe(listener: SessionEventListener, options?: SubscribeOptions): () => void {
    return this.eventHub().subscribe(listener, options);
  }

  /**
   * The events from now until the session next waits for the user, is done or stops (that
   * event included). Create it before `send()`; leaving the loop early unsubscribes it.
   */
  stream(options?: SubscribeOptions): AsyncIterableIterator<SessionStreamEvent, undefined> {
    return new SessionEventStream(this.eventHub(), options);
  }

  /** Listeners and unfinished streams attached to this session (0 when nobody listens). */
  get listenerCount(): number {
    return this.events?.listenerCount ?? 0;
  }

  /**
   * @internal Where this session's model calls stream their text while a listener wants it
   * (undefined otherwise: the model then does not stream). The runtime's turns call it.
   */
  textDeltaSink(): ((text: string) => void) | undefined {
    return this.events?.textDeltaSink;
  }

  private eventHub(): SessionEventHub {
    return (this.events ??= new SessionEventHub(this.id, () => this.actor));
  }

  /** The user events the session would take now, its guards evaluated (a subset of `view().acceptedEvents`). */
  enabledEvents(): UserEventType[] {
    return enabledUserEvents(this.actor.getSnapshot());
  }

  /**
   * The whole conversation of the manager or of the worker (every worker run, in order):
   * the archive's messages and the context's window. The context keeps only the window.
   */
  async transcript(name: TranscriptName = 'manager'): Promise<ChatMessage[]> {
    await this.writes;
    return fullTranscript(this.readArchive, name, this.actor.getSnapshot().context.transcripts[name]);
  }

  /** A tag version with its body, also one whose body left the context. */
  async tagVersion(tag: string, version: number): Promise<TagVersion | undefined> {
    await this.writes;
    return findTagVersion(this.readArchive, this.actor.getSnapshot().context, tag, version);
  }

  /** Versions of a tag as the archive holds them (for the turn actors). */
  async archivedVersions(tag: string, versions: readonly number[]): Promise<TagVersion[]> {
    await this.writes;
    return readVersions(this.readArchive, tag, versions);
  }

  /** Every version of a tag with its body, oldest first. */
  async tagVersions(tag: string): Promise<TagVersion[]> {
    await this.writes;
    return allTagVersions(this.readArchive, this.actor.getSnapshot().context, tag);
  }

  private readonly readArchive: ArchiveReader = (kind, key, options) =>
    this.persistence ? this.persistence.store.archived(this.id, kind, key, options) : this.memoryArchive!.read(kind, key, options);

  /** Takes what the context added since the last call: into the memory archive, or for the next write. */
  private archive(context: SessionContext): void {
    const before = this.archivedContext;
    if (context === before) return;
    this.archivedContext = context;
    if (this.memoryArchive) {
      // In memory, only what left the context is kept apart (the context holds the rest).
      if (before) this.memoryArchive.add(droppedItems(before, context));
      return;
    }
    const added = historyItems(before, context);
    if (added.length) (this.unarchived ??= []).push(...added);
  }

  /** XState's persisted snapshot in Steward's versioned envelope. */
  persisted(): unknown {
    return envelope(this.actor.getPersistedSnapshot());
  }

  /** Resolves when the session waits for the user or is done (e.g. after a resume). */
  async settled(): Promise<SessionView> {
    await this.untilWaitOrEnd();
    await this.writes;
    return this.view();
  }

  /** Sends a user event; resolves when the session waits for the user again or is done. */
  send(event: unknown): Promise<SendResult> {
    const run = this.busy ? this.busy.then(() => this.sendNow(event)) : this.sendNow(event);
    // Keep only completion (not the result and its view) so an idle session holds nothing extra.
    const done: Promise<void> = run.then(() => {
      if (this.busy === done) this.busy = null;
    });
    this.busy = done;
    return run;
  }

  /** Stops the actor: an in-flight model call is aborted; a durable session stays resumable. */
  stop(): void {
    this.actor.stop();
    void this.letGoIfIdle();
  }

  /** Stops the actor and waits until the journal writes it had queued are done (and its lease is let go). */
  async close(): Promise<void> {
    this.actor.stop();
    await this.writes;
    await this.letGoIfIdle();
  }

  /** Gives the session's own lease up once it waits, is done or stopped, its writes done, and no send is under way. */
  private async letGoIfIdle(): Promise<void> {
    const leasing = this.persistence?.leasing;
    if (!leasing || this.sending > 0) return;
    await this.writes;
    const snapshot = this.actor.getSnapshot();
    if (this.sending > 0 || !isWaitOrEnd(snapshot)) return;
    await leasing.letGo();
  }

  /** Before a send: the session's lease (stores with leases); a refusal when it cannot be had. */
  private async takeLease(): Promise<SendResult | undefined> {
    const persistence = this.persistence;
    if (!persistence?.leasing || this.fatal || this.actor.getSnapshot().status !== 'active') return undefined;
    const error = await leaseForSend(persistence.leasing, persistence.store, this.id, persistence.revision);
    return error ? { ok: false, error, view: this.view() } : undefined;
  }

  private refuse(code: string, message: string): SendResult {
    return { ok: false, error: { code, message }, view: this.view() };
  }

  /**
   * A refused event: the message and the chart's reading at the state that refused it. A
   * refusal changes only `rejections`, which no guard reads, so the view's reading of the
   * state now is that reading: the chart is read once.
   */
  private refused(eventType: string, message: string): SendResult {
    const view = this.view();
    return { ok: false, error: { code: 'event_refused', message, eventType, state: view.state, accepted: view.acceptedEvents, enabled: view.enabledEvents }, view };
  }

  /**
   * A refusal decided here, before the machine saw the event (malformed, over a limit, session
   * done), journalled like the machine's own: the event's type and the refusal, never its
   * (possibly huge or malformed) fields. Nothing else changes.
   */
  private async refuseRecorded(raw: unknown, code: string, message: string, result: SendResult = this.refuse(code, message)): Promise<SendResult> {
    if (this.persistence) {
      const type = (raw as { type?: unknown } | null)?.type;
      const state = snapshotState(this.actor.getSnapshot());
      const entryType = typeof type === 'string' && type.length <= 100 ? type : 'invalid_event';
      (this.unwritten ??= []).push({ kind: 'event', type: entryType, payload: { type: entryType, refused: { code, message: clip(message, this.limits.refusalMessageChars) } }, state });
      this.acknowledging = true;
      if (this.unwritten.length === 1) this.writes = (this.writes ?? Promise.resolve()).then(() => this.writeUnwritten());
      await this.flush();
    }
    return result;
  }

  /** Without leases (memory, SQLite) the event reaches the actor synchronously, inside send(). */
  private sendNow(raw: unknown): Promise<SendResult> {
    return this.persistence?.leasing ? this.sendLeased(raw) : this.handle(raw);
  }

  private async sendLeased(raw: unknown): Promise<SendResult> {
    this.sending += 1;
    try {
      return (await this.takeLease()) ?? (await this.handle(raw));
    } finally {
      this.sending -= 1;
      await this.letGoIfIdle();
    }
  }

  private async handle(raw: unknown): Promise<SendResult> {
    try {
      if (this.fatal) return this.refuse('session_failed', `This session stopped on an internal error: ${String(this.fatal)}. Resume it from the store to continue.`);
      const lost = this.persistence?.leasing?.lostMessage;
      if (lost && this.actor.getSnapshot().status === 'stopped') return this.refuse('lease_lost', lost);
      if (this.actor.getSnapshot().status === 'stopped') return this.refuse('session_stopped', 'This session object was stopped (after a conflict, a failed write or stop()). Open it again with runtime.resumeSession(id).');
      const parsed = UserEventSchema.safeParse(raw);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; ');
        return this.refuseRecorded(raw, 'invalid_event', `Invalid event: ${problems}. Events look like { type: "user_submitted_input", text: "…" }.`);
      }
      // Stamped here, so that a time the context keeps comes with the event (transitions are
      // pure). zod's output is a fresh object of ours: set the field rather than copy it.
      const event: UserEvent = parsed.data;
      const reserved = reservedActorProblem(event, this.actor.getSnapshot().context);
      if (reserved) return this.refuseRecorded(event, 'invalid_event', `Invalid event: ${reserved}`);
      const tooBig = overUserTextLimit(event, this.limits.userTextChars);
      if (tooBig) return this.refuseRecorded(event, tooBig.code, tooBig.message);
      event.at = isoNow();
      const before = this.actor.getSnapshot();
      if (before.status === 'done') {
        const message = `"${event.type}" is not accepted because the session is done.`;
        return this.refuseRecorded(event, 'event_refused', message, this.refused(event.type, message));
      }
      this.actor.send(event);
      const after = this.actor.getSnapshot();
      if (after.context.rejections !== before.context.rejections) {
        this.acknowledging = true;
        await this.flush();
        const last = after.context.rejections[after.context.rejections.length - 1]!;
        return this.refused(event.type, last.reason);
      }
      await this.untilWaitOrEnd();
      if (this.persistence) await this.flush();
      if (this.fatal) return this.refuse('session_failed', `The session failed: ${String(this.fatal)}`);
      const leaseLost = this.persistence?.leasing?.lostMessage;
      if (leaseLost && this.actor.getSnapshot().status === 'stopped') return this.refuse('lease_lost', leaseLost);
      if (this.actor.getSnapshot().status === 'stopped') return this.refuse('session_stopped', `The session was stopped before it waited for you again. ${this.persistence ? 'Resume it with runtime.resumeSession(id): an interrupted model call runs again.' : 'It lived in memory only.'}`);
      return { ok: true, view: this.view() };
    } catch (error) {
      if (error instanceof ConflictError) return this.refuse(error.code, error.message);
      const code = StewardError.isStewardError(error) ? error.code : 'internal_error';
      return this.refuse(code, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * Resolves when the session waits for the user, is done, or its actor stopped (a failed
   * write stops it). Never rejects: what went wrong is read from `fatal` / `writeError`.
   */
  private untilWaitOrEnd(): Promise<void> {
    const snapshot = this.actor.getSnapshot();
    if (isWaitOrEnd(snapshot) || snapshot.status !== 'active') return Promise.resolve();
    return new Promise((resolve) => (this.waiters ??= []).push(resolve));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = null;
    if (waiters) for (const resolve of waiters) resolve();
  }

  private async flush(): Promise<void> {
    await this.writes;
    if (this.writeError) {
      const error = this.writeError;
      this.writeError = null;
      throw error;
    }
  }

  private onInspect(e: InspectionEvent): void {
    this.userInspect?.(e);
    if (!this.persistence || e.type !== '@xstate.snapshot' || e.actorRef !== this.actor) return;
    const snapshot = e.snapshot as AnyMachineSnapshot;
    this.archive(snapshot.context as SessionContext);
    const kind = journalKind(e.event.type);
    if (!kind) return;
    const state = snapshotState(snapshot);
    const added = this.unarchived;
    this.unarchived = null;
    (this.unwritten ??= []).push({ kind, type: e.event.type, payload: eventPayload(e.event), state, ...(added ? { added } : {}) });
    // Writes are chained so the journal keeps the order of events. Events that arrive while a
    // write is under way go together in the next one, with the snapshot as it is then: one
    // transaction for all of them, and one snapshot instead of one per event.
    if (this.unwritten.length === 1) this.writes = (this.writes ?? Promise.resolve()).then(() => this.writeUnwritten());
  }

  private async writeUnwritten(): Promise<void> {
    const persistence = this.persistence!;
    const entries = this.unwritten;
    this.unwritten = null;
    if (this.writeError || !entries?.length) return;
    // What a person is shown — a wait, the end, a refusal — is durable before send()
    // resolves, and makes every write before it durable too; a write inside a model loop
    // need not be (a power loss then loses only rounds no send() acknowledged; resume runs
    // them again). See docs/design.md §8, "Durability".
    const durable = this.acknowledging || isWaitOrEnd(this.actor.getSnapshot());
    this.acknowledging = false;
    const lease = persistence.leasing?.current;
    const options = { ...(lease ? { lease } : {}), ...(durable ? {} : { durable: false }) };
    try {
      persistence.revision = await persistence.store.append({ id: this.id, expectedRevision: persistence.revision, entries, snapshot: this.persisted(), ...options });
      if (lease) persistence.leasing!.wrote();
    } catch (error) {
      // Another writer won (ConflictError) or the store failed: stop at once, so this
      // process never runs on a state it could not save. The store still holds the last
      // good state; resume from it.
      this.writeError = error;
      this.actor.stop();
    }
  }
}
