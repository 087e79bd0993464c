/**
 * The sessions one `steward serve` process drives. A session is held while a request (or a
 * takeover) uses it (held-sessions.ts): loaded from the store for a send, or taken from the
 * ones this server kept loaded while they waited (on PostgreSQL; `keepLoaded` of them at
 * most, so memory does not grow with the number of sessions). A kept copy is checked against
 * the store by its first write before anything it does counts, and a copy behind the store is
 * replaced by the session as stored, so every request sees what any other server wrote.
 *
 * On a store with leases (PostgresStore) a held session is leased (src/store/lease-keeper.ts):
 * the lease is taken before the session is loaded, so two processes never both run one; a
 * send while another process (a server, or a CLI `run`/`send`/`resume`, which lease too)
 * runs it gets 409 `session_running_elsewhere` naming that process, without running a model
 * call. The takeover scan (takeover-scan.ts) hands it running sessions whose runner died. While
 * the lease is not known to be held (lost, or its renewals came too late: this process or
 * the database is overloaded, or it was paused), no model call starts and no live event is
 * published; while renewals run late, the scan claims nothing.
 * Without leases (SQLite, memory: one machine) servers meet at the revision check only.
 *
 * Shutdown (`drain`): no new sends, no more takeovers; the sends under way get `graceMs`
 * to settle; then the rest are stopped and their leases released, so another server takes
 * a running one over at its next scan instead of after a whole lease.
 */
import type { SendOptions } from '../runtime/send-keys.js';
import { storedView } from '../runtime/persisted.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SendResult, Session } from '../runtime/session.js';
import type { UserEvent } from '../core/machines/session.events.js';
import type { SessionView } from '../core/view.js';
import type { SessionStore, StoredDeadline, StoredSession } from '../store/session-store.js';
import { DEFAULT_KEEP_LOADED, DEFAULT_LEASE_MS } from './defaults.js';
import { UserError } from '../core/errors.js';
import { HttpError, sessionNotFound as notFound } from '../http/errors.js';
import { anyRenewsLate, leaseOwnerName } from '../store/lease-keeper.js';
import type { LiveRecord, ReplayLimits } from './live-replay.js';
import { LiveEvents } from './live-events.js';
import { HeldSessions, type Held } from './held-sessions.js';
import { firstEventProblem } from './first-event.js';
import { settledWithin, TakeoverScan } from './takeover-scan.js';
import { DeadlineScan } from './deadline-scan.js';

/** What an async send answers once the session took the event: the run goes on. */
export interface Accepted {
  accepted: true;
  sessionId: string;
  revision: number | null;
}

export interface SessionHostOptions {
  /** Lease length (default 30 s): a dead server's sessions are taken over this long after its last renewal. */
  leaseMs?: number;
  /**
   * Sessions this process runs at once, at most (0: no limit). A send for another session
   * beyond it is refused with 429 and Retry-After (`isFull`) instead of queueing behind the
   * model calls under way: the client retries, or another server takes it.
   */
  maxRunning?: number;
  /**
   * Sessions kept loaded while they wait for a person, at most, on a store with leases (default 1,000; 0: none): the
   * next send to one skips the statement that leases and loads it; its first write checks
   * that nobody moved it on meanwhile (held-sessions.ts). The least recently used are closed first.
   */
  keepLoaded?: number;
  /** Bounds of the live events kept for replay (live-replay.ts): per session, in sessions, and in bytes for all together (`maxTotalBytes`, `--max-replay-mb`). */
  replay?: Partial<ReplayLimits>;
  /** This process's name in the leases table, shown to whoever finds a session running here (default "steward serve on HOST pid N"). */
  owner?: string;
  log?: (message: string) => void;
}

type Sent = SendResult & { revision: number | null };

/** What `SessionHost.create` is asked for. */
export interface CreateOptions {
  packageId?: string;
  maxBurst?: number;
  id?: string;
  /** The user event the caller sends next (a protocol's first request): checked now, so that its refusal leaves no session. */
  first?: unknown;
  /** Called once the request is checked, before the session is stored; throws to refuse it (the create limit: admitCreate). */
  admit?: () => void;
  /** The caller who creates it (ownerOf): null or absent for no named caller. */
  owner?: string | null;
  /** People and groups (`group:NAME`) who see and decide it besides its owner. */
  participants?: readonly string[];
  /** Tags on its blackboard before it starts (tag → body: version 1 of each, written by "app"). */
  blackboard?: Record<string, string>;
}

export class SessionHost {
  readonly owner: string;
  readonly leaseMs: number;
  readonly maxRunning: number;
  /** Sessions kept loaded while they wait, at most (held-sessions.ts). */
  readonly keepLoaded: number;
  private readonly held: HeldSessions;
  private readonly sends = new Set<Promise<unknown>>();
  private readonly live: LiveEvents;
  /** The server's log (what a request's failure tells the operator, beside what its client is told). */
  readonly log: (message: string) => void;
  private readonly takeover: TakeoverScan | null;
  private readonly deadlines: DeadlineScan;
  private draining = false;

  constructor(
    readonly runtime: Runtime,
    readonly store: SessionStore,
    options: SessionHostOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxRunning = options.maxRunning ?? 0;
    this.owner = options.owner ?? leaseOwnerName('steward serve');
    this.log = options.log ?? (() => {});
    this.live = new LiveEvents(store.events, this.log, options.replay);
    this.keepLoaded = options.keepLoaded ?? DEFAULT_KEEP_LOADED;
    if (!Number.isInteger(this.keepLoaded) || this.keepLoaded < 0)
      throw new UserError(`keepLoaded must be a whole number ≥ 0 (0: none), got ${String(options.keepLoaded)}.`);
    this.held = new HeldSessions(runtime, store, { owner: this.owner, leaseMs: this.leaseMs, live: this.live, log: this.log, keepLoaded: this.keepLoaded });
    this.takeover = store.leases
      ? new TakeoverScan(store.leases, {
          owner: this.owner,
          leaseMs: this.leaseMs,
          maxRunning: this.maxRunning,
          running: () => this.held.size,
          draining: () => this.draining,
          keepers: () => this.held.keepers(),
          hear: () => this.live.hear(),
          adopt: (lease, askedAt) => this.held.adopt(lease, askedAt),
          log: this.log,
        })
      : null;
    this.deadlines = new DeadlineScan({
      now: () => runtime.clock.now(),
      dueDeadlines: (now, limit) => store.dueDeadlines(now, limit),
      fire: (id, deadline) => this.fireDeadline(id, deadline),
      draining: () => this.draining,
      log: this.log,
    });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** True when a send for `id` would start one session more than `maxRunning` allows. */
  isFull(id: string): boolean {
    return this.maxRunning > 0 && !this.held.has(id) && this.held.size >= this.maxRunning;
  }

  /** Sessions this process holds now (sends under way and takeovers). */
  get busy(): number {
    return this.held.size;
  }

  /** Sessions kept loaded now while they wait (at most `keepLoaded`). */
  get parked(): number {
    return this.held.parkedCount;
  }

  /** Bytes of live events kept for replay now, all sessions together (bounded by `replay.maxTotalBytes`). */
  get replayBytes(): number {
    return this.live.replay.bytes;
  }

  /** Whether this server renews a lease it holds late (it or the database is overloaded): its takeover scans claim nothing meanwhile. */
  get renewsLate(): boolean {
    return anyRenewsLate(this.held.keepers());
  }

  /** Leases this server lost while it ran their sessions (another server may have run them too). */
  get leasesLost(): number {
    return this.held.leasesLost;
  }

  /**
   * Creates a session that waits for its first input. `id`: the caller's own session id (an
   * AG-UI thread id); a new one otherwise. Checked before anything is stored, so a refused
   * request leaves no session behind: `first`, the user event the caller will send first (a
   * protocol's first request), as a new session would check it (firstEventProblem); then
   * `admit`, which throws to refuse (the create limit, admitCreate).
   */
  async create(options: CreateOptions): Promise<{ view: SessionView; revision: number | null }> {
    this.refuseWhileDraining();
    const { first, admit, ...create } = options;
    if (first !== undefined) {
      const problem = firstEventProblem(first, this.runtime.limits);
      if (problem) throw problem;
    }
    admit?.();
    const session = await this.runtime.createSession(create);
    // A new session waits for its first input: nothing runs, so nothing needs to stay loaded.
    const answer = { view: session.view(), revision: session.revision ?? null };
    await session.close();
    return answer;
  }

  /**
   * The session's view: the live one while this process runs it, else the stored one (`read`:
   * the stored session as the caller read it already, the access check say, so it is not read twice).
   */
  async view(id: string, read?: StoredSession): Promise<{ view: SessionView; revision: number | null }> {
    const held = this.held.get(id);
    const session = held ? await held.ready.catch(() => undefined) : undefined;
    // A copy kept loaded and not yet checked against the store may be behind it: the store says.
    if (session && held!.verified) return { view: session.view(), revision: session.revision ?? null };
    const stored = read ?? (await this.store.load(id));
    if (!stored) throw notFound(id);
    return { view: storedView(this.runtime.machine, stored), revision: stored.revision };
  }

  /**
   * Sends a validated user event; resolves with the SendResult once the session waits again.
   * `observe` is handed the session before the event reaches it (to follow its live events
   * with text deltas, say, and read its view as it runs) and returns what stops observing.
   */
  send(id: string, event: unknown, observe?: (session: Session) => () => void, options: SendOptions = {}): Promise<Sent> {
    return this.dispatch(id, event, false, observe, options) as Promise<Sent>;
  }

  /** `send`, answered as soon as the session took the event (`Prefer: respond-async`); a refusal still answers with the SendResult. */
  sendAsync(id: string, event: unknown, options: SendOptions = {}): Promise<Sent | Accepted> {
    // Its caller reads the rest from the stream it opens next: the run streams from the start.
    this.live.expectFollower(id);
    return this.dispatch(id, event, true, undefined, options);
  }

  private async dispatch(
    id: string,
    event: unknown,
    async: boolean,
    observe: ((session: Session) => () => void) | undefined,
    options: SendOptions,
  ): Promise<Sent | Accepted> {
    this.refuseWhileDraining();
    const { held, session: loaded } = await this.loaded(id);
    let accepted: (answer: Accepted) => void = () => {};
    const acceptance = new Promise<Accepted>((resolve) => (accepted = resolve));
    let stopObserving: (() => void) | undefined;
    // The observer starts with this send's turn: a send queued behind another one's run does not hear that run.
    const sendTo = (session: Session) => {
      // A send again (the kept copy was stale) stops observing the copy first.
      stopObserving?.();
      stopObserving = undefined;
      const onTurn = () => (stopObserving = observe?.(session));
      const onAccepted = () => accepted({ accepted: true, sessionId: id, revision: session.revision ?? null });
      // the route's schema checked the event; send() checks it again
      return session.send(event as UserEvent, async ? { ...options, onAccepted, onTurn } : { ...options, onTurn });
    };
    const settled = (async () => {
      try {
        const { session, result } = await this.sendFresh(id, held, loaded, sendTo);
        if (!result.ok && held.keeper?.lost)
          return {
            ok: false as const,
            error: { code: 'lease_lost' as const, message: held.keeper.lostMessage },
            view: result.view,
            revision: session.revision ?? null,
          };
        return { ...result, revision: session.revision ?? null };
      } finally {
        stopObserving?.();
        await this.held.release(id, held);
      }
    })();
    this.track(settled);
    return async ? Promise.race([acceptance, settled]) : settled;
  }

  /**
   * `send` to the held session; once more, to the session as stored now, when the copy it was
   * (kept loaded) ran on a stale state (`ranStale`) or `unchecked` says its answer counts for
   * nothing. Nothing was written or told the first time.
   */
  private async sendFresh<R extends SendResult | null>(
    id: string,
    held: Held,
    session: Session,
    send: (session: Session) => Promise<R>,
    unchecked: (result: R) => boolean = () => false,
  ): Promise<{ session: Session; result: R }> {
    const result = await send(session);
    if (!this.ranStale(held, session, result) && !unchecked(result)) return { session, result };
    const fresh = await this.held.restart(id, held, session);
    return { session: fresh, result: await send(fresh) };
  }

  /** Sends and deadlines under way, until settled: drain waits for them. */
  private track(work: Promise<unknown>): void {
    this.sends.add(work);
    const done = () => this.sends.delete(work);
    void work.then(done, done);
  }

  /**
   * Whether `session`, taken from the parked ones, ended its send on a stale state: its write
   * that was to take the lease was refused by that statement (the store had moved on, nothing
   * was written; HeldSessions' `stale`), or it is the stale copy a restart replaced. Any other
   * failure is the send's own answer: a write that may have committed is never sent again.
   */
  private ranStale(held: Held, session: Session, result: SendResult | null): boolean {
    if (this.draining || result?.ok !== false || session.isActive) return false;
    return session === held.restartedFrom || (session === held.session && held.stale !== null);
  }

  /**
   * A new session from `id`'s state after journal entry `atSeq` (default: its last), like
   * `steward fork`: a model call in flight at that point runs again before this resolves.
   * `admit` throws to refuse it before anything is stored (the create limit).
   */
  async fork(
    id: string,
    options: { atSeq?: number; id?: string; admit?: () => void; owner?: string | null; participants?: readonly string[] },
  ): Promise<{ view: SessionView; revision: number | null }> {
    this.refuseWhileDraining();
    const atSeq = options.atSeq ?? (await this.lastSeq(id));
    // The fork is a new session: once its source is known, the create limit has its say.
    options.admit?.();
    const forked = {
      atSeq,
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.owner !== undefined ? { owner: options.owner } : {}),
      ...(options.participants !== undefined ? { participants: options.participants } : {}),
    };
    const forking = this.runtime.forkSession(id, forked).then(async (fork) => {
      const view = await fork.settled();
      const revision = fork.revision ?? null;
      await fork.close();
      return { view, revision };
    });
    this.sends.add(forking);
    try {
      return await forking;
    } finally {
      this.sends.delete(forking);
    }
  }

  private async lastSeq(id: string): Promise<number> {
    if (!(await this.store.load(id))) throw notFound(id);
    let last = 0;
    for (;;) {
      const page = await this.store.journal(id, { afterSeq: last, limit: 1000 });
      if (page.length === 0) return last;
      last = page.at(-1)!.seq;
    }
  }

  /**
   * The current run's live events of a session kept so far and each new one, from wherever
   * it runs: through the store's event bus when it has one (PostgreSQL NOTIFY: sessions on
   * other servers too), else those of the sessions this process holds. Resolves once listening.
   */
  /**
   * Whether some process runs the session now: this one holds it, or (a store with leases)
   * another holds its lease. A session saved while running that nobody runs (a killed CLI on
   * SQLite) is running in the store only: waiting for it to move would wait for nothing.
   *
   * @example
   * if (view.phase === 'running' && !(await host.runsNow(id))) throw new Error('stuck: resume it');
   */
  async runsNow(id: string): Promise<boolean> {
    if (this.held.has(id)) return true;
    return (await this.store.leases?.holder(id)) != null;
  }

  watchLive(id: string, listener: (record: LiveRecord) => void, options?: { follow?: boolean }): Promise<{ replay: LiveRecord[]; stop: () => void }> {
    return this.live.watch(id, listener, options);
  }

  /**
   * Takes over running sessions whose runner died, from now on (takeover-scan.ts): each one
   * claimed runs here until it waits for the user. No-op on a store without leases.
   */
  startTakeover(): void {
    this.takeover?.start();
  }

  /** Whether this process takes over sessions whose runner died (a store with leases, and startTakeover called). */
  get takesOver(): boolean {
    return this.takeover?.running ?? false;
  }

  /** One takeover tick now (takeover-scan.ts); the ids claimed. */
  scanAll(batch?: number): Promise<string[]> {
    return this.takeover ? this.takeover.scanAll(batch) : Promise.resolve([]);
  }

  /** One takeover scan now; the ids claimed (their runs go on in the background). */
  scanOnce(limit?: number): Promise<string[]> {
    return this.takeover ? this.takeover.scanOnce(limit) : Promise.resolve([]);
  }

  /** Fires the deadlines of waits as they come due, from now on (deadline-scan.ts). */
  startDeadlines(everyMs?: number): void {
    this.deadlines.start(everyMs);
  }

  /** One scan of due deadlines now; the ids of the sessions whose deadline this server fired. */
  fireDueDeadlines(limit?: number): Promise<string[]> {
    return this.deadlines.scan(limit);
  }

  /**
   * Loads the session as a send does (under its lease) and passes it the deadline; resolves
   * once the deadline is journalled (true) or was not sent (false), while what it starts (a
   * model round after a rejection) runs on here like a send's run, and drain waits for it.
   */
  private async fireDeadline(id: string, deadline: StoredDeadline): Promise<boolean> {
    const { held, session: loaded } = await this.loaded(id);
    let accepted: () => void = () => {};
    const acceptance = new Promise<boolean>((resolve) => (accepted = () => resolve(true)));
    const settled = (async () => {
      try {
        // A copy not yet checked against the store may not know this deadline (it was opened
        // elsewhere since): its "not current" says nothing, so it is asked again, loaded afresh.
        const { result } = await this.sendFresh(
          id,
          held,
          loaded,
          (session) => session.passDeadline(deadline, () => accepted()),
          (r) => r === null && !held.verified,
        );
        if (result && !result.ok) this.log(`serve: the deadline of session ${id} was refused: ${result.error.message}`);
        return result !== null && result.ok;
      } finally {
        await this.held.release(id, held);
      }
    })();
    this.track(settled);
    return Promise.race([acceptance, settled]);
  }

  /** The session, held here (loaded, and leased on a store with leases) until the caller releases it; not held if it cannot be loaded. */
  private async loaded(id: string): Promise<{ held: Held; session: Session }> {
    const held = this.held.hold(id);
    try {
      return { held, session: await held.ready };
    } catch (error) {
      await this.held.release(id, held);
      throw error;
    }
  }

  /** Stops taking sends and takeovers, lets sends under way settle for up to `graceMs`, then stops the rest. */
  async drain(graceMs: number): Promise<{ settled: number; handedBack: string[] }> {
    this.draining = true;
    this.takeover?.stop();
    this.deadlines.stop();
    const pending = [...this.sends];
    await this.held.closeParked();
    await settledWithin(pending, graceMs);
    const handedBack: string[] = [];
    for (const [id, held] of this.held.entries()) {
      const session = await held.ready.catch(() => undefined);
      if (!session) continue;
      handedBack.push(id);
      await session.close();
    }
    // The stopped sends and takeovers end now; their releases give the leases back.
    await Promise.allSettled([...this.sends, ...this.held.takeoversUnderWay()]);
    await this.live.close();
    return { settled: pending.length - handedBack.length, handedBack };
  }

  private refuseWhileDraining(): void {
    if (this.draining)
      throw new HttpError(
        503,
        'server_stopping',
        'This server is shutting down and takes no new work: send the request to another server, or retry in a moment.',
      );
  }
}
