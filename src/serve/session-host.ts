/**
 * The sessions one `steward serve` process drives. A session is held in memory only while a
 * request (or a takeover) uses it: loaded from the store for a send, closed when the send
 * settles. So every request sees what any other server wrote, and memory does not grow
 * with the number of sessions.
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
import { randomBytes } from 'node:crypto';
import type { SendOptions } from '../runtime/send-keys.js';
import { performance } from 'node:perf_hooks';
import { snapshotState } from '../machines/refusals.js';
import { storedSnapshot } from '../runtime/persisted.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SendResult, Session } from '../runtime/session.js';
import type { UserEvent } from '../machines/session.events.js';
import type { SessionStreamEvent } from '../machines/stream-events.js';
import { sessionView, type SessionView } from '../runtime/view.js';
import type { ClaimedLease, Lease, LeaseOps, SessionStore, StoredSession } from '../store/session-store.js';
import { DEFAULT_LEASE_MS } from './defaults.js';
import { HttpError, sessionNotFound as notFound, sessionRunningElsewhere } from '../http/errors.js';
import { LeaseKeeper, leaseOwnerName } from '../store/lease-keeper.js';
import type { LiveRecord } from './live-replay.js';
import { LiveEvents } from './live-events.js';
import { settledWithin, TakeoverScan } from './takeover-scan.js';

interface Held {
  /** The session, once loaded (and leased). */
  ready: Promise<Session>;
  /** Requests (and a takeover) using it; counted at once, so a release never closes it under a newcomer. */
  users: number;
  keeper: LeaseKeeper | null;
  unsubscribe: (() => void) | null;
  /** This run's name and the number of its last live event (see live-replay.ts). */
  run: string;
  published: number;
}

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
  /** This process's name in the leases table, shown to whoever finds a session running here (default "steward serve on HOST pid N"). */
  owner?: string;
  log?: (message: string) => void;
}

type Sent = SendResult & { revision: number | null };

const newRunId = () => randomBytes(6).toString('hex');

export class SessionHost {
  readonly owner: string;
  readonly leaseMs: number;
  readonly maxRunning: number;
  private readonly held = new Map<string, Held>();
  /** Sessions this process is letting go of (closing, giving the lease back), by id. */
  private readonly releasing = new Map<string, Promise<void>>();
  private readonly sends = new Set<Promise<unknown>>();
  private readonly takeovers = new Set<Promise<void>>();
  private readonly live: LiveEvents;
  private readonly log: (message: string) => void;
  private lostCount = 0;
  private readonly takeover: TakeoverScan | null;
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
    this.live = new LiveEvents(store.events, this.log);
    this.takeover = store.leases
      ? new TakeoverScan(store.leases, {
          owner: this.owner,
          leaseMs: this.leaseMs,
          maxRunning: this.maxRunning,
          running: () => this.held.size,
          draining: () => this.draining,
          keepers: () => this.keepers(),
          hear: () => this.live.hear(),
          adopt: (lease, askedAt) => this.adopt(lease, askedAt),
          log: this.log,
        })
      : null;
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

  /** Leases this server lost while it ran their sessions (another server may have run them too). */
  get leasesLost(): number {
    return this.lostCount;
  }

  private get leases(): LeaseOps | undefined {
    return this.store.leases;
  }

  /** `id`: the caller's own session id (an AG-UI thread id); a new one otherwise. */
  async create(options: { packageId?: string; maxBurst?: number; id?: string }): Promise<{ view: SessionView; revision: number | null }> {
    this.refuseWhileDraining();
    const session = await this.runtime.createSession(options);
    // A new session waits for its first input: nothing runs, so nothing needs to stay loaded.
    const answer = { view: session.view(), revision: session.revision ?? null };
    await session.close();
    return answer;
  }

  /** The session's view: the live one while this process runs it, else the stored one. */
  async view(id: string): Promise<{ view: SessionView; revision: number | null }> {
    const held = this.held.get(id);
    const session = held ? await held.ready.catch(() => undefined) : undefined;
    if (session) return { view: session.view(), revision: session.revision ?? null };
    const stored = await this.store.load(id);
    if (!stored) throw notFound(id);
    return { view: sessionView(storedSnapshot(this.runtime.machine, stored)), revision: stored.revision };
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
    const held = this.hold(id);
    let session: Session;
    try {
      session = await held.ready;
    } catch (error) {
      await this.release(id, held);
      throw error;
    }
    const stopObserving = observe?.(session);
    let accepted: (answer: Accepted) => void = () => {};
    const acceptance = new Promise<Accepted>((resolve) => (accepted = resolve));
    const onAccepted = () => accepted({ accepted: true, sessionId: id, revision: session.revision ?? null });
    // the route's schema checked the event; send() checks it again
    const sending = session.send(event as UserEvent, async ? { ...options, onAccepted } : options);
    this.sends.add(sending);
    const settled = (async () => {
      try {
        const result = await sending;
        if (!result.ok && held.keeper?.lost)
          return {
            ok: false as const,
            error: { code: 'lease_lost' as const, message: held.keeper.lostMessage },
            view: result.view,
            revision: session.revision ?? null,
          };
        return { ...result, revision: session.revision ?? null };
      } finally {
        this.sends.delete(sending);
        stopObserving?.();
        await this.release(id, held);
      }
    })();
    return async ? Promise.race([acceptance, settled]) : settled;
  }

  /**
   * A new session from `id`'s state after journal entry `atSeq` (default: its last), like
   * `steward fork`: a model call in flight at that point runs again before this resolves.
   */
  async fork(id: string, options: { atSeq?: number; id?: string }): Promise<{ view: SessionView; revision: number | null }> {
    this.refuseWhileDraining();
    const atSeq = options.atSeq ?? (await this.lastSeq(id));
    const forking = this.runtime.forkSession(id, { atSeq, ...(options.id !== undefined ? { id: options.id } : {}) }).then(async (fork) => {
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

  /** One takeover tick now (takeover-scan.ts); the ids claimed. */
  scanAll(batch?: number): Promise<string[]> {
    return this.takeover ? this.takeover.scanAll(batch) : Promise.resolve([]);
  }

  /** One takeover scan now; the ids claimed (their runs go on in the background). */
  scanOnce(limit?: number): Promise<string[]> {
    return this.takeover ? this.takeover.scanOnce(limit) : Promise.resolve([]);
  }

  /** Stops taking sends and takeovers, lets sends under way settle for up to `graceMs`, then stops the rest. */
  async drain(graceMs: number): Promise<{ settled: number; handedBack: string[] }> {
    this.draining = true;
    this.takeover?.stop();
    const pending = [...this.sends];
    await settledWithin(pending, graceMs);
    const handedBack: string[] = [];
    for (const [id, held] of this.held) {
      const session = await held.ready.catch(() => undefined);
      if (!session) continue;
      handedBack.push(id);
      await session.close();
    }
    // The stopped sends and takeovers end now; their releases give the leases back.
    await Promise.allSettled([...this.sends, ...this.takeovers]);
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

  /** One Session object per id in this process, however many requests use it at once. */
  private hold(id: string): Held {
    const existing = this.held.get(id);
    if (existing) {
      existing.users += 1;
      return existing;
    }
    const held: Held = { ready: null as never, users: 1, keeper: null, unsubscribe: null, run: newRunId(), published: 0 };
    held.ready = (async () => {
      await this.releasing.get(id);
      // Listening before the lease: the run's live events reach this process's buffers too.
      await this.live.hear();
      const askedAt = performance.now();
      const { stored, lease } = await this.leaseAndLoad(id);
      try {
        const state = snapshotState(storedSnapshot(this.runtime.machine, stored));
        if (state.startsWith('running')) {
          // Nobody holds its lease, yet it runs: its runner stopped or lost the lease (every
          // runner on a store with leases takes one), or it is a process that takes none.
          const resume = `resume it with \`steward resume ${id}\` (the interrupted model call runs again)`;
          throw sessionRunningElsewhere(
            id,
            state,
            lease
              ? `No process holds its lease: the one running it stopped or lost it. A server takes it over once its last runner's lease has run out, or ${resume}. ` +
                  `Wait until it waits for you (GET /sessions/${id}/stream tells you), then send again.`
              : `Wait until it waits for you (GET /sessions/${id}/stream tells you), then send again. If that process is gone, ${resume}.`,
          );
        }
        // Resume exactly what was checked: a second read could find it running by now.
        return await this.start(held, id, stored, lease, askedAt);
      } catch (error) {
        // Unused: this grant wrote nothing, so the takeover scan still judges the session by
        // its last runner's lease (or, for a runner without one, by a quiet period), never
        // by this look: a live runner is not taken over because of a send.
        if (held.keeper) await held.keeper.release({ unused: true });
        else if (lease) await this.leases!.releaseLease(lease, { unused: true }).catch(() => {});
        throw error;
      }
    })();
    held.ready.catch(() => {}); // handled by the request that awaits it
    this.held.set(id, held);
    return held;
  }

  /**
   * The session as stored, leased first where the store has leases (in one round trip): what
   * this server loads can no longer change under it.
   */
  private async leaseAndLoad(id: string): Promise<{ stored: StoredSession; lease: Lease | null }> {
    if (!this.leases) {
      const stored = await this.store.load(id);
      if (!stored) throw notFound(id);
      return { stored, lease: null };
    }
    const found = await this.leases.acquireAndLoad(id, this.owner, this.leaseMs);
    if (!found.stored) throw notFound(id);
    if (!found.lease)
      throw sessionRunningElsewhere(
        id,
        null,
        `It holds the session's lease. Wait until it waits for you (GET /sessions/${id}/stream tells you), then send again.`,
        found.holder?.owner,
      );
    return { stored: found.stored, lease: found.lease };
  }

  /** The leases this server holds now (its sends' and takeovers'). */
  private *keepers(): Iterable<LeaseKeeper> {
    for (const { keeper } of this.held.values()) if (keeper) yield keeper;
  }

  /**
   * A running session this server just claimed: run it until it waits (the in-flight call
   * again). Resolves once it has started here (rejects if it could not).
   */
  private adopt(lease: ClaimedLease, askedAt: number): Promise<unknown> {
    const id = lease.sessionId;
    if (this.held.has(id)) {
      // Cannot happen while this process renews its own leases; never run a session twice here.
      void this.leases!.releaseLease(lease).catch(() => {});
      return Promise.resolve();
    }
    const held: Held = { ready: null as never, users: 1, keeper: null, unsubscribe: null, run: newRunId(), published: 0 };
    held.ready = (async () => {
      try {
        // As the claim locked it: nobody wrote it since (the lease is ours).
        const { stored } = lease;
        const state = snapshotState(storedSnapshot(this.runtime.machine, stored));
        this.log(`serve: took over ${id} (${state}, revision ${stored.revision}): its model call runs again here.`);
        return await this.start(held, id, stored, { sessionId: id, owner: lease.owner, token: lease.token }, askedAt);
      } catch (error) {
        // The claim is kept until it runs out: a session that cannot be resumed (its snapshot
        // refused) is tried again once a lease, not by every server's next scan.
        held.keeper?.abandon();
        throw error;
      }
    })();
    this.held.set(id, held);
    const run = (async () => {
      try {
        const session = await held.ready;
        const view = await session.settled();
        if (held.keeper?.lost) this.log(`serve: lost the lease on ${id} during the takeover: ${held.keeper.lostMessage}`);
        else this.log(`serve: ${id} taken over, now ${view.state}.`);
      } catch (error) {
        this.log(`serve: takeover of ${id} failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await this.release(id, held);
      }
    })();
    this.takeovers.add(run);
    void run.finally(() => this.takeovers.delete(run));
    return held.ready;
  }

  /** `askedAt`: when the statement that granted `lease` was sent (performance.now()). */
  private async start(held: Held, id: string, stored: StoredSession, lease: Lease | null, askedAt: number): Promise<Session> {
    let session: Session | undefined;
    const keeper = lease
      ? new LeaseKeeper(
          this.leases!,
          lease,
          this.leaseMs,
          () => {
            this.lostCount += 1;
            session?.stop();
          },
          (message) => this.log(`serve: ${message}`),
          askedAt,
        )
      : null;
    held.keeper = keeper;
    session = await this.runtime.resumeSession(id, { from: stored, ...(lease ? { lease, leaseCheck: () => keeper!.ensureHeld() } : {}) });
    if (keeper?.lost) session.stop();
    // The deltas of a reply only while someone follows the session (followers.ts): an
    // unwatched call does not stream.
    held.unsubscribe = session.subscribe((event) => this.publish(id, held, event, keeper), { textDeltas: () => this.live.isFollowed(id) });
    return session;
  }

  /**
   * A live event of a held session, numbered in its run, to the streams of every server
   * (text deltas too; see live-events.ts). Dropped once the lease is not known to be held
   * (another server may run it now).
   */
  private publish(id: string, held: Held, event: SessionStreamEvent, keeper: LeaseKeeper | null): void {
    if (keeper && !keeper.isHeld()) return;
    const record: LiveRecord = { run: held.run, n: ++held.published, event };
    this.live.publish(id, record);
  }

  private async release(id: string, held: Held): Promise<void> {
    held.users -= 1;
    if (held.users > 0) return;
    if (this.held.get(id) === held) this.held.delete(id);
    const letGo = (async () => {
      const session = await held.ready.catch(() => undefined);
      // Unsubscribed first: letting the object go after a send is no `stopped` of the session.
      held.unsubscribe?.();
      await session?.close();
      await held.keeper?.release();
    })();
    // Until the lease is given back, a send that comes in waits for it (see hold) instead of
    // finding this server's own lease and answering that the session runs elsewhere.
    this.releasing.set(id, letGo);
    try {
      await letGo;
    } finally {
      if (this.releasing.get(id) === letGo) this.releasing.delete(id);
    }
  }
}
