/**
 * The sessions one `steward serve` process has loaded: one Session object per id, however
 * many requests (and a takeover) use it at once. The first user loads it — leased first on
 * a store with leases (src/store/lease-keeper.ts), so two processes never both run it — and
 * the last one to let go gives the lease back (its write at rest, or a release after it).
 * While the lease is not known to be held, no live event of it is published (another server
 * may run it now). What to do with a held session (send, drain) is the SessionHost's
 * (session-host.ts).
 *
 * On a store with leases (PostgreSQL) a session let go while it waits for a person stays
 * loaded, "parked" (up to `keepLoaded`, the least recently used closed first): the next send
 * to it on this server starts without a statement to lease and load it. Its lease was given
 * up at rest, so any server may move it on meanwhile; the parked object may then be behind
 * the store. So its next write is checked: the revision it last wrote, and a lease taken in
 * the same statement (LeaseOps.appendAcquiring; the model and tool calls wait for it, and its
 * live events are held back until it settles: Session.take). A write that finds the store
 * moved on is not made, and what the object did on its stale state is dropped with it; the
 * host then starts over from the row that statement read (`restart`). Without leases nothing
 * would hold a stale copy's model call back, and a load is a local read: nothing is parked.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { snapshotState } from '../core/machines/refusals.js';
import type { SessionStreamEvent } from '../core/machines/stream-events.js';
import { storedSnapshot } from '../runtime/persisted.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Session } from '../runtime/session.js';
import type { LeaseHandOver, LeaseRearm } from '../runtime/session-lease.js';
import { isWaiting } from '../runtime/session-deadline.js';
import type { ClaimedLease, Lease, LeasedLoad, LeaseOps, SessionStore, StoredSession } from '../store/session-store.js';
import { LeaseKeeper } from '../store/lease-keeper.js';
import { sessionNotFound as notFound, sessionRunningElsewhere } from '../http/errors.js';
import type { LiveRecord } from './live-replay.js';
import type { LiveEvents } from './live-events.js';

/** A session loaded in this process, and who uses it. */
export interface Held {
  /** The session, once loaded (and leased). */
  ready: Promise<Session>;
  /** The session once started here (the same object while it is parked and used again). */
  session: Session | null;
  /** Requests (and a takeover) using it; counted at once, so a release never closes it under a newcomer. */
  users: number;
  keeper: LeaseKeeper | null;
  unsubscribe: (() => void) | null;
  /** This run's name and the number of its last live event (see live-replay.ts). */
  run: string;
  published: number;
  /**
   * Whether the session is known to be the one stored: loaded for this use, or taken from the
   * parked ones and checked since (its last write that took the lease was made). Until then its view is not the session's (SessionHost.view reads the store).
   */
  verified: boolean;
  /** While taken from the parked ones on a store with leases: settles when its first write that starts a run took a lease, or was refused. */
  granting: { settled: Promise<void>; settle: () => void } | null;
  /** That write was refused: the session as stored now, the lease when it was free, and when that statement was sent (restart starts from it). */
  stale: { found: LeasedLoad; askedAt: number } | null;
  /** The stale object `restart` replaced (a second send queued on it is sent again too). */
  restartedFrom: Session | null;
}

const newHeld = (): Held => ({
  ready: null as never,
  session: null,
  users: 1,
  keeper: null,
  unsubscribe: null,
  run: newRunId(),
  published: 0,
  verified: false,
  granting: null,
  stale: null,
  restartedFrom: null,
});

/** A new run of `held`'s session: numbered afresh, no lease yet, nothing refused, not yet checked against the store. */
function newRun(held: Held): void {
  Object.assign(held, { run: newRunId(), published: 0, keeper: null, stale: null, verified: false });
}

/** `held`'s run publishes nothing more, and no lease is being taken for it (a write's grant still coming back is given back: rearm). */
function endRun(held: Held): void {
  held.unsubscribe?.();
  held.unsubscribe = null;
  held.granting?.settle();
  held.granting = null;
}

function granting(): NonNullable<Held['granting']> {
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  return { settled, settle };
}

const newRunId = () => randomBytes(6).toString('hex');

export interface HeldSessionsOptions {
  owner: string;
  leaseMs: number;
  live: LiveEvents;
  log: (message: string) => void;
  /** Sessions kept loaded while they wait (parked), at most; 0: each is closed once let go. */
  keepLoaded: number;
}

export class HeldSessions {
  private readonly held = new Map<string, Held>();
  /** Sessions this process is letting go of (closing, giving the lease back), by id. */
  private readonly releasing = new Map<string, Promise<void>>();
  /** The runs of sessions taken over, until each has released its session. */
  private readonly takeovers = new Set<Promise<void>>();
  /** Sessions let go while they wait, kept loaded: least recently used first. */
  private readonly parked = new Map<string, Held>();
  private lostCount = 0;
  /** Draining: nothing is parked any more. */
  private draining = false;
  private readonly keepLoaded: number;
  private readonly owner: string;
  private readonly leaseMs: number;
  private readonly live: LiveEvents;
  private readonly log: (message: string) => void;

  constructor(
    private readonly runtime: Runtime,
    private readonly store: SessionStore,
    options: HeldSessionsOptions,
  ) {
    this.owner = options.owner;
    this.leaseMs = options.leaseMs;
    this.live = options.live;
    this.log = options.log;
    this.keepLoaded = options.keepLoaded;
  }

  /** Sessions kept loaded while they wait (parked). */
  get parkedCount(): number {
    return this.parked.size;
  }

  /** Sessions held now (sends under way and takeovers). */
  get size(): number {
    return this.held.size;
  }

  has(id: string): boolean {
    return this.held.has(id);
  }

  get(id: string): Held | undefined {
    return this.held.get(id);
  }

  /** The sessions held now, by id. */
  entries(): IterableIterator<[string, Held]> {
    return this.held.entries();
  }

  /** The takeovers under way: each settles once its session was released. */
  takeoversUnderWay(): Array<Promise<void>> {
    return [...this.takeovers];
  }

  /** Leases lost while their sessions ran here (another server may have run them too). */
  get leasesLost(): number {
    return this.lostCount;
  }

  private get leases(): LeaseOps | undefined {
    return this.store.leases;
  }

  /** One Session object per id in this process, however many requests use it at once. */
  hold(id: string): Held {
    const existing = this.held.get(id);
    if (existing) {
      existing.users += 1;
      return existing;
    }
    const parked = this.parked.get(id);
    this.parked.delete(id);
    const held = parked ?? newHeld();
    if (parked) {
      newRun(held);
      held.users = 1;
      held.restartedFrom = null;
    }
    held.ready = (async () => {
      await this.releasing.get(id);
      const session = parked?.session;
      // Listening before the lease: the run's live events reach this process's buffers too.
      // A parked copy taken for a send that cannot start is closed, not left running unheld.
      await this.live.hear().catch(async (error: unknown) => {
        await session?.close();
        throw error;
      });
      if (session?.isActive) return this.unpark(id, held, session);
      await session?.close();
      return this.load(id, held, null);
    })();
    held.ready.catch(() => {}); // handled by the request that awaits it
    this.held.set(id, held);
    return held;
  }

  /**
   * The session of `held` ran on a stale state (taken from the parked ones, its first write
   * found the store moved on, and nothing was written): it is closed, and the session is
   * loaded afresh into the same hold — from what that write's statement read, when it took
   * the lease (no second statement). Resolves with the session to send to again.
   */
  restart(id: string, held: Held, stale: Session): Promise<Session> {
    if (held.session !== stale) return held.ready;
    const refused = held.stale;
    newRun(held);
    held.restartedFrom = stale;
    endRun(held);
    held.session = null;
    held.ready = (async () => {
      await stale.close();
      const { found, askedAt } = refused ?? { found: null, askedAt: 0 };
      return this.load(id, held, found?.lease ? { stored: found.stored!, lease: found.lease, askedAt } : null);
    })();
    held.ready.catch(() => {});
    return held.ready;
  }

  /**
   * A parked session used again: its next write takes the lease (the session holds its events
   * back until that write settles: Session.take), and checks it is not behind the store.
   */
  private unpark(id: string, held: Held, session: Session): Session {
    held.verified = false;
    held.granting = granting();
    session.park(false);
    this.listen(id, held, session);
    return session;
  }

  /** The session loaded for `held` (leased first where the store has leases; `found`: as a statement sent at `askedAt` already leased and read it). */
  private async load(id: string, held: Held, found: { stored: StoredSession; lease: Lease; askedAt: number } | null): Promise<Session> {
    const { stored, lease, askedAt } = found ?? { askedAt: performance.now(), ...(await this.leaseAndLoad(id)) };
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

  /** The leases held now (the sends' and the takeovers'). */
  *keepers(): Iterable<LeaseKeeper> {
    for (const { keeper } of this.held.values()) if (keeper) yield keeper;
  }

  /**
   * A running session this server just claimed: run it until it waits (the in-flight call
   * again). Resolves once it has started here (rejects if it could not).
   */
  adopt(lease: ClaimedLease, askedAt: number): Promise<unknown> {
    const id = lease.sessionId;
    if (this.held.has(id)) {
      // A copy taken from the parked ones, not yet checked (it holds no lease): it finds the
      // session running at its first write and answers 409; the claim is given back, and the
      // next scan takes the session. Never run a session twice here.
      void this.leases!.releaseLease(lease).catch(() => {});
      return Promise.resolve();
    }
    // A parked copy is behind the store: the claimed session ran elsewhere since.
    this.dropParked(id);
    const held = newHeld();
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
    if (lease) held.keeper = this.keeper(held, lease, askedAt);
    let started: Session | undefined;
    const session = await this.runtime.resumeSession(id, {
      from: stored,
      ...(lease
        ? {
            lease,
            leaseCheck: () => this.leaseHeld(held, () => started === undefined || held.session === started),
            leaseHandOver: this.handOver(id, held),
            leaseRearm: this.rearm(held, id),
          }
        : {}),
    });
    started = session;
    held.session = session;
    held.verified = true;
    if (held.keeper?.lost) session.stop();
    this.listen(id, held, session);
    return session;
  }

  /** Keeps `lease` renewed while `held` runs; a lost one stops its session. */
  private keeper(held: Held, lease: Lease, askedAt: number): LeaseKeeper {
    return new LeaseKeeper(
      this.leases!,
      lease,
      this.leaseMs,
      () => {
        this.lostCount += 1;
        held.session?.stop();
      },
      (message) => this.log(`serve: ${message}`),
      askedAt,
    );
  }

  /**
   * Before each model or tool call of a session: a lease being taken by its write is waited for;
   * then it must be held, for that session (`current`: not one a restart replaced; a session
   * still starting, a takeover's resumed call, is the hold's own).
   */
  private async leaseHeld(held: Held, current: () => boolean): Promise<boolean> {
    await held.granting?.settled;
    return current() && held.keeper !== null && (await held.keeper.ensureHeld());
  }

  /** How a parked session used again takes its lease with its first write that starts a run (see the top of this file). */
  private rearm(held: Held, id: string): LeaseRearm {
    // No grant's: a write fenced by it commits nothing (grants are numbered from 1).
    const noGrant: Lease = { sessionId: id, owner: this.owner, token: 0 };
    return {
      // Neither held nor being taken (the hold ended; a timer's write after it, say): that
      // write must not commit without a lease, so it is fenced by no grant.
      current: () => held.keeper?.lease ?? (held.granting ? undefined : noGrant),
      grantWanted: () => (held.keeper === null && held.granting ? { owner: this.owner, ms: this.leaseMs } : null),
      granted: (lease, askedAt) => {
        held.verified = true;
        if (!lease) return; // a write at rest: the next write that starts a run takes one again
        if (!held.granting) {
          // The hold ended while this write was under way (a timer's write, say): nobody here
          // runs on the grant, and no keeper may renew it for ever. It goes back; the writes
          // after it are fenced by no grant (current) and commit nothing.
          void this.leases!.releaseLease(lease).catch(() => {});
          return;
        }
        held.keeper = this.keeper(held, lease, askedAt);
        held.granting.settle();
      },
      notGranted: (found, askedAt) => {
        held.verified = false;
        held.stale = { found, askedAt };
        held.granting?.settle();
      },
    };
  }

  /**
   * How a held session's write at rest gives its lease up (one round trip instead of a
   * release after it): only while one request (or takeover) uses it, for a second one still
   * needs the lease. From then on the session is handed to no one: a request that comes
   * meanwhile waits for that write (`releasing`), then leases and loads the session afresh.
   * The last user's `release` then closes the object and sends no release of its own.
   */
  private handOver(id: string, held: Held): LeaseHandOver {
    let written: () => void = () => {};
    return {
      atRest: () => {
        const keeper = held.keeper;
        if (held.users !== 1 || this.held.get(id) !== held || !keeper?.isHeld()) return false;
        keeper.givingUpWithWrite();
        this.held.delete(id);
        this.releasing.set(id, new Promise<void>((resolve) => (written = resolve)));
        return true;
      },
      settled: (committed) => {
        const keeper = held.keeper!;
        keeper.givenUp(committed);
        // Not given up: a request waiting for it takes the lease once this one's release is sent.
        if (committed) written();
        else void keeper.release().finally(written);
      },
    };
  }

  /** Publishes `session`'s live events as `held`'s run; a reply's text deltas only while someone follows the session (followers.ts). */
  private listen(id: string, held: Held, session: Session): void {
    held.unsubscribe = session.subscribe((event) => this.publish(id, held, event), { textDeltas: () => this.live.isFollowed(id) });
  }

  /**
   * A live event of a held session, numbered in its run, to the streams of every server
   * (text deltas too; see live-events.ts). Dropped once the lease is not known to be held
   * (another server may run it now).
   */
  private publish(id: string, held: Held, event: SessionStreamEvent): void {
    if (held.keeper && !held.keeper.isHeld()) return;
    const record: LiveRecord = { run: held.run, n: ++held.published, event };
    this.live.publish(id, record);
  }

  /**
   * One user of `held` is done; the last one gives the lease back and parks the session when
   * it waits (closes it otherwise, or when no more may stay loaded).
   */
  async release(id: string, held: Held): Promise<void> {
    held.users -= 1;
    if (held.users > 0) return;
    if (this.held.get(id) === held) this.held.delete(id);
    const letGo = (async () => {
      const session = await held.ready.catch(() => undefined);
      // Unsubscribed first: letting the object go after a send is no `stopped` of the session.
      endRun(held);
      await held.keeper?.release();
      // A refused write's grant nobody started over from (the server is draining): given back unused.
      const unused = held.stale?.found.lease;
      held.stale = null;
      if (unused) await this.leases!.releaseLease(unused, { unused: true }).catch(() => {});
      if (session && this.mayPark(id, held, session)) this.park(id, held, session);
      else await session?.close();
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

  /** Whether a session let go may stay loaded: on a store with leases, it waits, nothing of its lease is left, and nobody here holds a newer copy. */
  private mayPark(id: string, held: Held, session: Session): boolean {
    // Only on a store with leases: nothing else would hold a stale copy's model call back until
    // its first write is refused, and there a load is a local read.
    if (!this.leases || this.keepLoaded === 0 || this.draining || held.keeper?.lost || this.held.has(id)) return false;
    return session.isActive && isWaiting(session.actorRef.getSnapshot()) && session.revision !== undefined;
  }

  private park(id: string, held: Held, session: Session): void {
    session.park(true);
    held.keeper = null;
    this.parked.set(id, held);
    // The least recently used go first: closing one that waits writes nothing.
    for (const [oldId, old] of this.parked) {
      if (this.parked.size <= this.keepLoaded) break;
      this.parked.delete(oldId);
      void old.session?.close();
    }
  }

  /** Drops the parked copy of `id`, if any (it is behind the store). */
  private dropParked(id: string): void {
    const parked = this.parked.get(id);
    if (!parked) return;
    this.parked.delete(id);
    void parked.session?.close();
  }

  /** No more parking; the parked sessions are closed (they hold no lease). */
  async closeParked(): Promise<void> {
    this.draining = true;
    const parked = [...this.parked.values()];
    this.parked.clear();
    await Promise.all(parked.map((held) => held.session?.close()));
  }
}
