/**
 * A live session: one actor of the session machine, `send()` (one at a time, in call order),
 * which resolves when the session waits for the user again (or is done), its view and its
 * live events. What the actor did is kept by SessionJournal (session-journal.ts): journal
 * entries, writes, durability and the archive. A refused or malformed
 * event resolves `{ ok: false, error }` with state and context unchanged (but for the
 * refusal log); nothing escapes `send()` as an exception.
 */
import { waitFor, type Actor, type InspectionEvent, type Observer } from 'xstate';
import { ConflictError, LimitExceededError, SessionLeasedError, type RefusalDetails } from '../core/errors.js';
import { DEFAULT_LIMITS, overLimitMessage, userTextChars, type Limits } from '../core/limits.js';
import { enabledUserEvents, snapshotState } from '../core/machines/refusals.js';
import type { SessionMachine } from '../core/machines/session.machine.js';
import { UserEventSchema, type UserEvent, type UserEventType } from '../core/machines/session.events.js';
import type { TagVersion } from '../core/blackboard/blackboard.js';
import type { SessionContext } from '../core/machines/session.context.js';
import type { ChatMessage, DeltaSinks } from '../core/models/model.js';
import { allTagVersions, fullTranscript, findTagVersion, MemoryArchive, readVersions, type ArchiveReader, type TranscriptName } from './archive.js';
import { reservedActorProblem } from './reserved-names.js';
import { SEND_KEYS_KEPT, type SendKeyInput, type SendKeyRecord, type SessionStore, type StoredPackageVersion } from '../store/session-store.js';
import type { PackageUpgradedEvent } from '../core/machines/package-upgrade.js';
import { eventFingerprint, idempotencyKeyProblem, type SendOptions } from './send-keys.js';
import { closedWaitMessage, decisionDigest, repeatsClosingDecision } from '../core/machines/waits.js';
import { answerOfWait, readJournal } from './journal-waits.js';
import { SessionEventHub, type RoundAgent } from './event-hub.js';
import { SessionEventStream } from './event-stream.js';
import { sessionEnvelope } from './persisted.js';
import { leaseForSend, type SessionLeasing } from './session-lease.js';
import { MemoryHistory, SessionJournal } from './session-journal.js';
import { isoNow } from './iso-now.js';
import type { SessionStreamEvent } from '../core/machines/stream-events.js';
import type { SessionEventListener, SubscribeOptions } from './session-events.js';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import { sessionView, type SessionView } from '../core/view.js';
import type { WebhookReceiver } from '../webhooks/receivers.js';
import { WebhookNotices } from './webhook-notices.js';
import { plainCodeOf, type PlainSendCode } from './send-codes.js';
import type { WebhookLinks } from '../webhooks/links.js';
import { isWaiting, SessionDeadline, systemClock, type DeadlineClock } from './session-deadline.js';
import { STEWARD } from '../core/machines/deadline-outcomes.js';
import type { DeadlinePassedEvent } from '../core/machines/deadlines.js';
import type { StoredDeadline } from '../store/session-store.js';

/** Why send() did not take an event: a refusal says by the chart what the state takes instead. */
export type SendError =
  | ({ code: 'event_refused'; message: string } & RefusalDetails)
  /** The open wait names who decides it (`approvers`, `reviewers`, an escalation), and the event's `groups` hold none of them nor `admin`. */
  | ({ code: 'not_a_decider'; message: string } & RefusalDetails)
  /** The event named a wait (`wait`) that is no longer open: nothing was applied. `openWait`: the wait open now, if one is. */
  | ({ code: 'wait_closed'; message: string; wait: number; openWait: number | null } & RefusalDetails)
  /** Another process holds the session's lease and runs it: `holder` is its own description. */
  | { code: 'session_running_elsewhere'; message: string; holder: string | null }
  | { code: PlainSendCode; message: string };

/**
 * What `send()` resolves with. `repeated: true`: nothing was applied, and nothing needed to be:
 * a send with an idempotency key already journalled for the session (this is the result the
 * first send resolved with), or a decision naming a wait that this same decision already
 * answered (a double click, a retry; the view is the session as it is now).
 */
export type SendResult = ({ ok: true; view: SessionView } | { ok: false; error: SendError; view: SessionView }) & { repeated?: true };

export interface Persistence {
  store: SessionStore;
  revision: number;
  /** Stores with leases (PostgresStore): the session's lease, which fences every write (session-lease.ts). */
  leasing?: SessionLeasing;
  /** The open wait's deadline as the store holds it (session-deadline.ts); null or absent: none. */
  deadline?: StoredDeadline | null;
}

/** @internal What the runtime passes to build a Session (`runtime.createSession()`, `resumeSession()`…). */
export interface SessionOptions {
  id: string;
  /** Creates and starts the actor, with the inspection callback the session needs (undefined: none). */
  start: (inspect: ((e: InspectionEvent) => void) | undefined) => Actor<SessionMachine>;
  /** Where the session is journalled; without it, it lives in memory only. */
  persistence?: Persistence | null;
  /** The runtime's `inspect` option: every inspection event of the actor. */
  inspect?: (e: InspectionEvent) => void;
  /** Called once when the actor ends (done, stopped or failed). */
  onEnd?: () => void;
  limits?: Readonly<Limits>;
  /**
   * The context whose history is already archived (null or absent: none of it is; without a
   * store, the context the session starts from).
   */
  archivedFrom?: SessionContext | null;
  /** Without a store: the archive to keep (a migrated snapshot's history). */
  memory?: MemoryArchive;
  /** The version of a package on disk (its hash), for the view to say when the pinned one is older. */
  packageOnDisk?: (packageId: string) => string | undefined;
  /** Why a valid event is refused before it reaches the chart (a tool call's edited arguments against the tool's schema), or null. */
  checkEvent?: (event: UserEvent, context: SessionContext) => Promise<string | null> | string | null;
  /** Webhook receivers (with a store): what the chart emits that they want goes to the outbox with its journal entry. */
  webhooks?: readonly Pick<WebhookReceiver, 'url' | 'events'>[];
  /** The clock the open wait's deadline is armed on (default: the system's). */
  clock?: DeadlineClock;
  /** With webhooks: the decision links a message announcing a wait with deciders carries. */
  webhookLinks?: WebhookLinks;
}

// The state value's top key, read directly: this runs on every snapshot (`matches` parses its argument each time).
const isWaitOrEnd = (s: SessionSnapshot) => s.status !== 'active' || (typeof s.value === 'object' && Object.hasOwn(s.value, 'waiting_user'));

/** The text of a user event (every string field, all answers together) over `max` characters. */
function overUserTextLimit(event: UserEvent, max: number): LimitExceededError | undefined {
  const size = userTextChars(event);
  if (size <= max) return undefined;
  const message = `${overLimitMessage(`The text of ${event.type}`, size, 'userTextChars', max)} Nothing was sent; send a shorter text or raise the limit.`;
  return new LimitExceededError(message, 'userTextChars', max, size);
}

/**
 * A live session: send it user events, read its view, follow its live events.
 *
 * @example
 * const session = await runtime.createSession({ packageId: 'tiny' });
 * const result = await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
 * if (result.ok) console.log(result.view.state, session.enabledEvents());
 * else console.log(result.error.code, result.error.message);
 */
export class Session {
  readonly id: string;
  private actor!: Actor<SessionMachine>;
  /** With a store: the entries, writes and archive of this session. */
  private readonly journal: SessionJournal | null;
  /** Without a store: the session's archive, in memory. */
  private readonly memory: MemoryHistory | null;
  private readonly readArchive: ArchiveReader;
  /** Stores with leases (PostgresStore): the session's lease, taken for a send and let go once it waits. */
  private readonly leasing: SessionLeasing | undefined;
  private readonly limits: Readonly<Limits>;
  private readonly userInspect: ((e: InspectionEvent) => void) | undefined;
  /** The send in progress, if any: sends run one at a time, in call order. */
  private busy: Promise<void> | null = null;
  private fatal: unknown = null;
  /**
   * Resolves once the journal holds what the session did so far (a tool call waits for it
   * before it reaches a server, so that a process that dies mid-call leaves it journalled).
   */
  async journalled(): Promise<void> {
    // The write of the step under way is queued as the step ends: let it be queued first.
    await new Promise((resolve) => setImmediate(resolve));
    await this.journal?.written();
  }

  /** Made on the first subscribe(): an idle session carries nothing for live events. */
  private events: SessionEventHub | null = null;
  /** sendNow() calls under way (at most one: send() queues them): the lease is not let go under one. */
  private sending = 0;
  /** Works enqueued and not yet done (sends, deadlines, upgrades): the one under way counts. */
  private queued = 0;
  /** The work under way has another step after this one (a deadline that came due passes before the decision). */
  private stepsAhead = false;
  /** Without a store: the idempotency keys of this session's sends (the latest SEND_KEYS_KEPT). */
  private readonly memoryKeys: Map<string, SendKeyRecord> | null;
  private readonly packageOnDisk: ((packageId: string) => string | undefined) | undefined;
  private readonly checkEvent: SessionOptions['checkEvent'];
  /** The open wait's deadline: its due time (kept in the store with each write) and its timer. */
  private readonly deadline: SessionDeadline;

  /** @internal Use `runtime.createSession()` or `runtime.resumeSession()`. */
  constructor(options: SessionOptions) {
    const { id, persistence, onEnd } = options;
    this.id = id;
    this.limits = options.limits ?? DEFAULT_LIMITS;
    this.userInspect = options.inspect;
    this.leasing = persistence?.leasing;
    this.packageOnDisk = options.packageOnDisk;
    this.checkEvent = options.checkEvent;
    const archivedFrom = options.archivedFrom ?? null;
    this.deadline = new SessionDeadline(options.clock ?? systemClock, persistence?.deadline ?? null, (due) => void this.passDeadline(due));
    let notices: WebhookNotices | null = null;
    this.journal = persistence
      ? new SessionJournal({
          id,
          store: persistence.store,
          revision: persistence.revision,
          ...(persistence.leasing ? { leasing: persistence.leasing } : {}),
          archivedFrom,
          refusalMessageChars: this.limits.refusalMessageChars,
          persisted: () => this.persisted(),
          // A stopped actor's write saves the state it stopped in (journal.stopping), with its deadline as it was.
          deadline: () => (this.actor.getSnapshot().status === 'stopped' ? this.deadline.current : this.deadline.follow(this.actor.getSnapshot())),
          atRest: () => isWaitOrEnd(this.actor.getSnapshot()),
          // The write at rest ends the lease only when no other work of this session follows it.
          lastWork: () => this.queued <= 1 && !this.stepsAhead,
          onWriteFailed: () => {
            this.deadline.stop();
            this.actor.stop();
          },
          ...(options.webhooks?.length
            ? {
                webhookMessages: (snapshot: SessionSnapshot) =>
                  notices?.take(() => sessionView(snapshot, this.packageOnDisk, { dueAt: this.deadline.follow(snapshot)?.dueAt ?? null })),
              }
            : {}),
        })
      : null;
    this.memory = this.journal ? null : new MemoryHistory(options.memory ?? new MemoryArchive(), archivedFrom);
    this.memoryKeys = this.journal ? null : new Map();
    this.readArchive = (this.journal ?? this.memory!).read;
    const inspect = this.journal || this.userInspect ? (e: InspectionEvent) => this.onInspect(e) : undefined;
    this.actor = options.start(inspect);
    if (this.journal && options.webhooks?.length) {
      // Waits opened before now were announced by the write that opened them (a new session's: its create).
      notices = new WebhookNotices(options.webhooks, this.actor.getSnapshot().context.waits.opened, options.webhookLinks);
      this.actor.on('*', notices.noticed);
    }
    // What the start itself changed (an eventless step of a restored snapshot; a new session's seeds).
    const context = this.actor.getSnapshot().context;
    if (this.journal) this.journal.archive(context);
    else this.memory!.keep(context);
    // One observer for the session's life: the memory archive and the end. Without an error
    // observer XState rethrows an actor's error asynchronously (a crash).
    const memory = this.memory;
    const deadline = this.deadline;
    deadline.follow(this.actor.getSnapshot());
    const observer: Observer<SessionSnapshot> = {
      next: (snapshot: SessionSnapshot) => {
        memory?.keep(snapshot.context);
        if (snapshot.status !== 'stopped') deadline.follow(snapshot);
      },
      error: (err) => {
        this.fatal = err;
        onEnd?.();
      },
      complete: () => onEnd?.(),
    };
    this.actor.subscribe(observer);
    const leasing = this.leasing;
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
    return this.journal?.revision;
  }

  view(): SessionView {
    return sessionView(this.actor.getSnapshot(), this.packageOnDisk, { dueAt: this.deadline.current?.dueAt ?? null });
  }

  /**
   * Calls `listener` synchronously with each live event (rounds, tool checks, artifacts,
   * waits, text deltas…) until the returned function is called. See core/machines/stream-events.ts.
   *
   * @example
   * const stop = session.subscribe((event) => { if (event.type === 'text_delta') process.stdout.write(event.text); });
   * await session.send({ type: 'user_confirmed_intake' });
   * stop();
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
   * @internal Where a model call of this session starting now streams its text and tool calls,
   * while a listener wants deltas (undefined otherwise: the model then does not stream). The
   * runtime's turns ask it once per call.
   */
  deltaSinks(agent?: RoundAgent): DeltaSinks | undefined {
    return this.events?.deltaSinks(agent);
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
    await this.journal?.written();
    return fullTranscript(this.readArchive, name, this.actor.getSnapshot().context.transcripts[name]);
  }

  /** A tag version with its body, also one whose body left the context. */
  async tagVersion(tag: string, version: number): Promise<TagVersion | undefined> {
    await this.journal?.written();
    return findTagVersion(this.readArchive, this.actor.getSnapshot().context, tag, version);
  }

  /** Versions of a tag as the archive holds them (for the turn actors). */
  async archivedVersions(tag: string, versions: readonly number[]): Promise<TagVersion[]> {
    await this.journal?.written();
    return readVersions(this.readArchive, tag, versions);
  }

  /** Every version of a tag with its body, oldest first. */
  async tagVersions(tag: string): Promise<TagVersion[]> {
    await this.journal?.written();
    return allTagVersions(this.readArchive, this.actor.getSnapshot().context, tag);
  }

  /** XState's persisted snapshot in Steward's versioned envelope. */
  persisted(): unknown {
    return sessionEnvelope(this.actor.logic, this.actor.getSnapshot());
  }

  /** Resolves when the session waits for the user or is done (e.g. after a resume). */
  async settled(): Promise<SessionView> {
    await this.untilWaitOrEnd();
    await this.journal?.written();
    return this.view();
  }

  /**
   * Sends a user event; resolves when the session waits for the user again or is done. A
   * refused or malformed event (from JavaScript the event is checked at run time too)
   * resolves `{ ok: false, error }`, state unchanged: nothing is thrown.
   *
   * With `idempotencyKey`, the send counts once: a key already journalled for this session
   * resolves with the stored result (`repeated: true`) and changes nothing, also on another
   * runtime on the same store and after a restart; the same key with another event is
   * refused with `idempotency_key_reused`.
   *
   * @example
   * const result = await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: 'approve-7f3a' });
   * if (!result.ok && result.error.code === 'event_refused') console.log('try', result.error.enabled);
   */
  send(event: UserEvent, options: SendOptions = {}): Promise<SendResult> {
    const { idempotencyKey: key, onAccepted, onTurn } = options;
    return this.enqueue(async () => {
      onTurn?.();
      // A deadline that came due before this decision arrived (its timer or a server's scan not yet run) passes first:
      // an expired approval is a rejection, whatever comes after it.
      const overdue = this.deadline.overdue();
      if (overdue) {
        this.stepsAhead = true;
        try {
          await this.sendLeased(() => this.handleDeadline(overdue));
        } finally {
          this.stepsAhead = false;
        }
      }
      return key === undefined ? this.sendNow(event, onAccepted) : this.sendLeased(() => this.sendKeyed(event, key, onAccepted));
    });
  }

  /**
   * @internal `runtime.upgradeSession`: the chart's `package_upgraded` event, while the session
   * waits, journalled with the new version (kept in the store in the same write).
   */
  upgrade(event: PackageUpgradedEvent, version: StoredPackageVersion): Promise<SendResult> {
    return this.enqueue(() => this.sendLeased(() => this.handleUpgrade(event, version)));
  }

  /**
   * @internal The open wait's deadline `due` passed (its timer here, or a server's scan of due
   * deadlines): the chart is sent `deadline_passed` for it, journalled `by: steward` through
   * `deadline`; resolves once the session waits again or is done. Null when `due` is not the
   * session's deadline any more (answered, escalated or reminded since): nothing is sent.
   */
  passDeadline(due: StoredDeadline, onAccepted?: () => void): Promise<SendResult | null> {
    return this.enqueue(() => this.sendLeased(() => this.handleDeadline(due, onAccepted))).then((result) => (result.ok && result.repeated ? null : result));
  }

  /** `onAccepted`: the deadline's entry is journalled (what follows, a model round say, goes on). */
  private async handleDeadline(due: StoredDeadline, onAccepted?: () => void): Promise<SendResult> {
    try {
      const before = this.actor.getSnapshot();
      // Nothing to do, said as a repeat (passDeadline turns it into null): the deadline moved on, or the session is no longer here to run.
      if (this.fatal || before.status !== 'active' || !this.deadline.isCurrent(due)) return { ok: true, view: this.view(), repeated: true };
      const event: DeadlinePassedEvent = { type: 'deadline_passed', wait: due.wait, level: due.level, at: isoNow(), by: STEWARD, through: 'deadline' };
      this.take(event);
      await this.journal?.acknowledge();
      onAccepted?.();
      await this.untilWaitOrEnd();
      await this.journal?.flush();
      const after = this.actor.getSnapshot();
      if (after.context.rejections !== before.context.rejections) return this.refused(event.type, after.context.rejections.at(-1)!.reason);
      return { ok: true, view: this.view() };
    } catch (error) {
      return this.failed(error);
    }
  }

  /** Runs `work` after the sends queued before it: one at a time, in call order. */
  private enqueue(work: () => Promise<SendResult>): Promise<SendResult> {
    this.queued += 1;
    const run = this.busy ? this.busy.then(work) : work();
    const dequeue = () => void (this.queued -= 1);
    run.then(dequeue, dequeue);
    // Keep only completion (not the result and its view) so an idle session holds nothing extra.
    const done: Promise<void> = run.then(() => {
      if (this.busy === done) this.busy = null;
    });
    this.busy = done;
    return run;
  }

  /**
   * @internal SessionHost, for a session it keeps loaded while it waits: no deadline timer
   * while parked (the server's scan of due deadlines fires them), and again once unparked.
   */
  park(parked: boolean): void {
    this.deadline.pause(parked);
  }

  /** @internal Whether the actor still runs (not stopped, closed or failed). */
  get isActive(): boolean {
    return this.actor.getSnapshot().status === 'active';
  }

  /**
   * @internal Before an event whose write is to take the lease (a session its server kept
   * loaded, SessionLeasing.grantWanted): the store may have moved on since this object's last
   * write, so the live events are held back until that write is made (then delivered) or
   * refused (then dropped, with everything the session did on a stale state).
   */
  holdEventsUntilWritten(): void {
    if (this.journal) this.eventHub().holdUntil(this.journal.nextWrite());
  }

  /** The actor takes `event`; its events wait for the write when that write is to take the lease. */
  private take(event: UserEvent | DeadlinePassedEvent | PackageUpgradedEvent): void {
    if (this.leasing?.grantWanted()) this.holdEventsUntilWritten();
    this.actor.send(event);
  }

  /** Stops the actor: an in-flight model call is aborted; a durable session stays resumable. */
  stop(): void {
    this.stopActor();
    void this.letGoIfIdle();
  }

  /** Stops the actor and waits until the journal writes it had queued are done (and its lease is let go). */
  async close(): Promise<void> {
    this.stopActor();
    await this.journal?.written();
    await this.letGoIfIdle();
  }

  /** Stops the actor; what its journal still has to write keeps the state it stopped in. */
  private stopActor(): void {
    this.deadline.stop();
    if (this.isActive) this.journal?.stopping(this.persisted());
    this.actor.stop();
  }

  /** Gives the session's own lease up once it waits, is done or stopped, its writes done, and no send is under way. */
  private async letGoIfIdle(): Promise<void> {
    const leasing = this.leasing;
    if (!leasing || this.sending > 0) return;
    await this.journal?.written();
    const snapshot = this.actor.getSnapshot();
    if (this.sending > 0 || !isWaitOrEnd(snapshot)) return;
    await leasing.letGo();
  }

  /** Before a send: the session's lease (stores with leases); a refusal when it cannot be had. */
  private async takeLease(): Promise<SendResult | undefined> {
    const journal = this.journal;
    if (!this.leasing || !journal || this.fatal || this.actor.getSnapshot().status !== 'active') return undefined;
    const error = await leaseForSend(this.leasing, journal.store, this.id, journal.revision);
    return error ? { ok: false, error, view: this.view() } : undefined;
  }

  private refuse(code: PlainSendCode, message: string): SendResult & { ok: false } {
    return { ok: false, error: { code, message }, view: this.view() };
  }

  /**
   * A refused event: the message and the chart's reading at the state that refused it. A
   * refusal changes only `rejections`, which no guard reads, so the view's reading of the
   * state now is that reading: the chart is read once.
   */
  private refused(eventType: string, message: string, code: 'event_refused' | 'not_a_decider' = 'event_refused'): SendResult & { ok: false } {
    const view = this.view();
    return {
      ok: false,
      error: { code, message, eventType, state: view.state, accepted: view.acceptedEvents, enabled: view.enabledEvents },
      view,
    };
  }

  /**
   * A decision for a wait that is not open (the chart's `wait_closed`, or a session done by
   * then): a repeat of the decision that closed that wait is harmless and says so
   * (`repeated`: the chart knows the latest wait's; the journal, with a store, any wait's); any
   * other is refused, naming the wait open now.
   */
  private async closedWait(event: UserEvent, message: string, repeated: boolean): Promise<SendResult> {
    const view = this.view();
    if (repeated || (await this.journalRepeats(event))) return { ok: true, view, repeated: true };
    const details = { eventType: event.type, state: view.state, accepted: view.acceptedEvents, enabled: view.enabledEvents };
    return { ok: false, error: { code: 'wait_closed', message, wait: event.wait!, openWait: view.wait ?? null, ...details }, view };
  }

  /** A refusal decided here, before the machine saw the event, journalled like the machine's own. Nothing else changes. */
  private async refuseRecorded(raw: unknown, result: SendResult & { ok: false }): Promise<SendResult> {
    await this.journal?.refusal(raw, result.error.code, result.error.message, snapshotState(this.actor.getSnapshot()));
    return result;
  }

  /** Whether the journal shows the wait `event` names answered by this same decision (no store: unknown, false). */
  private async journalRepeats(event: UserEvent): Promise<boolean> {
    if (!this.journal || event.wait === undefined) return false;
    await this.journal.written();
    const answer = answerOfWait(await readJournal(this.journal.store, this.id), event.wait);
    return answer !== undefined && decisionDigest(answer.payload as { type: string }) === decisionDigest(event);
  }

  /** An error thrown under a send, as its result (send() never throws). */
  private failed(error: unknown): SendResult {
    if (ConflictError.isInstance(error)) return this.refuse('conflict', error.message);
    const message = error instanceof Error ? error.message : String(error);
    if (SessionLeasedError.isInstance(error))
      return { ok: false, error: { code: 'session_running_elsewhere', message, holder: error.holder }, view: this.view() };
    return this.refuse(plainCodeOf(error), message);
  }

  /** Without leases (memory, SQLite) the event reaches the actor synchronously, inside send(). */
  private sendNow(raw: unknown, onAccepted?: () => void): Promise<SendResult> {
    return this.leasing ? this.sendLeased(() => this.handle(raw, undefined, onAccepted)) : this.handle(raw, undefined, onAccepted);
  }

  /** `run` under the session's lease, on a store with leases (else just `run`). */
  private async sendLeased(run: () => Promise<SendResult>): Promise<SendResult> {
    if (!this.leasing) return run();
    this.sending += 1;
    try {
      return (await this.takeLease()) ?? (await run());
    } finally {
      this.sending -= 1;
      await this.letGoIfIdle();
    }
  }

  /**
   * A send with an idempotency key: looked up first (under the lease: no other process runs
   * the session meanwhile); a known key answers from the store, a new one is journalled with
   * the event's entry, and the result is kept for a repeat once the send resolves.
   */
  private async sendKeyed(raw: unknown, key: string, onAccepted?: () => void): Promise<SendResult> {
    const problem = idempotencyKeyProblem(key);
    if (problem) return this.refuse('invalid_event', `Invalid send: ${problem}. Nothing was sent.`);
    const fingerprint = eventFingerprint(raw);
    let known: SendKeyRecord | undefined;
    try {
      known = this.journal ? await this.journal.store.sendKey(this.id, key) : this.memoryKeys!.get(key);
    } catch (error) {
      return this.failed(error);
    }
    if (known) return this.repeat(known, key, fingerprint);
    const sendKey: SendKeyInput = { key, fingerprint };
    const result = await this.handle(raw, sendKey, onAccepted);
    if (this.journal) {
      this.journal.expectKey(null);
      // Kept after the send resolved: a repeat meanwhile (another process) is told the send is under way.
      if (this.journal.keyWritten(key)) await this.journal.store.saveSendResult(this.id, key, result).catch(() => undefined);
    } else if (result.ok && !result.repeated) {
      const keys = this.memoryKeys!;
      keys.set(key, { ...sendKey, seq: keys.size + 1, result: structuredClone(result) });
      for (const old of keys.keys()) {
        if (keys.size <= SEND_KEYS_KEPT) break;
        keys.delete(old);
      }
    }
    return result;
  }

  /** A send whose key is journalled already: nothing is sent again. */
  private repeat(known: SendKeyRecord, key: string, fingerprint: string): SendResult {
    if (known.fingerprint !== fingerprint) {
      return this.refuse(
        'idempotency_key_reused',
        `Idempotency key "${key}" was used for another event of this session (journal entry ${known.seq}): nothing was sent. ` +
          'Send a new event with a new key; repeat a send only with the same event.',
      );
    }
    const stored = known.result as SendResult | null;
    if (!stored || typeof stored !== 'object' || typeof stored.ok !== 'boolean') {
      return this.refuse(
        'conflict',
        `The send with idempotency key "${key}" is journalled (entry ${known.seq}) but has no result yet: it is still under way, ` +
          'or its process stopped before it answered. Nothing was sent again; read the session to see where it is.',
      );
    }
    return { ...stored, repeated: true };
  }

  /** `package_upgraded` while the session waits; refused (nothing written) otherwise. */
  private async handleUpgrade(event: PackageUpgradedEvent, version: StoredPackageVersion): Promise<SendResult> {
    try {
      const before = this.actor.getSnapshot();
      if (this.fatal || !isWaiting(before)) {
        const state = before.status === 'done' ? 'done' : snapshotState(before);
        return this.refuse('user_error', `Session "${this.id}" is ${state}: a session is upgraded while it waits for you. Nothing was changed.`);
      }
      this.journal?.keepVersions([version]);
      this.take({ ...event, at: isoNow() });
      const after = this.actor.getSnapshot();
      await this.journal?.acknowledge();
      if (after.context.rejections !== before.context.rejections) return this.refused(event.type, after.context.rejections.at(-1)!.reason);
      return { ok: true, view: this.view() };
    } catch (error) {
      return this.failed(error);
    }
  }

  /** The refusal of an event sent to an object that failed or stopped (its lease lost, or stopped otherwise); null while it runs. */
  private notRunningRefusal(): SendResult | null {
    if (this.fatal)
      return this.refuse('session_failed', `This session stopped on an internal error: ${String(this.fatal)}. Resume it from the store to continue.`);
    if (this.actor.getSnapshot().status !== 'stopped') return null;
    const lost = this.leasing?.lostMessage;
    if (lost) return this.refuse('lease_lost', lost);
    return this.refuse(
      'session_stopped',
      'This session object was stopped (after a conflict, a failed write or stop()). Open it again with runtime.resumeSession(id).',
    );
  }

  private async handle(raw: unknown, sendKey?: SendKeyInput, onAccepted?: () => void): Promise<SendResult> {
    try {
      const stopped = this.notRunningRefusal();
      if (stopped) return stopped;
      // From here on the event reaches the journal (taken or refused): the key goes with its entry.
      this.journal?.expectKey(sendKey ?? null);
      const parsed = UserEventSchema.safeParse(raw);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; ');
        return this.refuseRecorded(
          raw,
          this.refuse('invalid_event', `Invalid event: ${problems}. Events look like { type: "user_submitted_input", text: "…" }.`),
        );
      }
      // Stamped here, so that a time the context keeps comes with the event (transitions are
      // pure). zod's output is a fresh object of ours: set the field rather than copy it.
      const event: UserEvent = parsed.data;
      const reserved = reservedActorProblem(event, this.actor.getSnapshot().context);
      if (reserved) return this.refuseRecorded(event, this.refuse('invalid_event', `Invalid event: ${reserved}`));
      const checked = this.checkEvent?.(event, this.actor.getSnapshot().context);
      const unfit = checked instanceof Promise ? await checked : checked;
      if (unfit) return this.refuseRecorded(event, this.refuse('invalid_event', `Invalid event: ${unfit}`));
      // Stopped (or failed) while the event was checked (a host replacing a stale copy, say):
      // the actor would drop it, and nothing may say it was accepted.
      const stoppedMeanwhile = this.notRunningRefusal();
      if (stoppedMeanwhile) return stoppedMeanwhile;
      const tooBig = overUserTextLimit(event, this.limits.userTextChars);
      if (tooBig) return this.refuseRecorded(event, this.refuse('limit_exceeded', tooBig.message));
      event.at = isoNow();
      const before = this.actor.getSnapshot();
      // An event that names no wait answers the open one: the journal keeps which (a later repeat is told by it).
      if (event.wait === undefined && isWaiting(before)) event.wait = before.context.waits.opened;
      if (before.status === 'done') {
        if (event.wait !== undefined) {
          const message = closedWaitMessage(before.context, event, 'done');
          await this.journal?.refusal(event, 'wait_closed', message, 'done');
          return this.closedWait(event, message, repeatsClosingDecision(before.context, event));
        }
        const message = `"${event.type}" is not accepted because the session is done.`;
        return this.refuseRecorded(event, this.refused(event.type, message));
      }
      this.take(event);
      const after = this.actor.getSnapshot();
      if (after.context.rejections !== before.context.rejections) {
        await this.journal?.acknowledge();
        const last = after.context.rejections[after.context.rejections.length - 1]!;
        if (last.code === 'wait_closed') return this.closedWait(event, last.reason, last.repeated === true);
        return this.refused(event.type, last.reason, last.code === 'not_a_decider' ? 'not_a_decider' : 'event_refused');
      }
      if (onAccepted) {
        await this.journal?.written();
        // A refused write accepted nothing: the send answers with its error below.
        if (!this.journal?.failed) onAccepted();
      }
      await this.untilWaitOrEnd();
      await this.journal?.flush();
      if (this.fatal) return this.refuse('session_failed', `The session failed: ${String(this.fatal)}`);
      const leaseLost = this.leasing?.lostMessage;
      if (leaseLost && this.actor.getSnapshot().status === 'stopped') return this.refuse('lease_lost', leaseLost);
      if (this.actor.getSnapshot().status === 'stopped')
        return this.refuse(
          'session_stopped',
          `The session was stopped before it waited for you again. ` +
            `${this.journal ? 'Resume it with runtime.resumeSession(id): an interrupted model call runs again.' : 'It lived in memory only.'}`,
        );
      return { ok: true, view: this.view() };
    } catch (error) {
      // send() never throws a refusal of its own: one arriving here would be a bug.
      return this.failed(error);
    }
  }

  /**
   * Resolves when the session waits for the user, is done, or its actor stopped (a failed
   * write stops it). Never rejects: XState's `waitFor` rejects when the actor fails or stops
   * first, which ends the wait just as well; what went wrong is read from `fatal` / the journal.
   */
  private untilWaitOrEnd(): Promise<unknown> {
    return waitFor(this.actor, isWaitOrEnd).catch(() => undefined);
  }

  private onInspect(e: InspectionEvent): void {
    this.userInspect?.(e);
    if (!this.journal || e.type !== '@xstate.snapshot' || e.actorRef !== this.actor) return;
    // XState types an inspected snapshot as any actor's; this one is our own actor's (checked
    // above). Not this.actor.getSnapshot(): when an initial action throws, that is already the
    // error snapshot, and the journal records the one the transition made.
    this.journal.record(e.event, e.snapshot as SessionSnapshot);
  }
}
