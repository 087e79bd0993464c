/**
 * How a Session holds its lease on a store with leases (PostgresStore), so that one
 * session is never run by two processes:
 * - `PassedLease`: the caller took the lease and keeps it renewed (SessionHost: a send or
 *   a takeover of `steward serve`); the session only fences its writes with it and asks the
 *   caller before each model call.
 * - `OwnLease`: nobody passed one (CLI `run`, `send`, `resume`, an app's own code): the
 *   session takes the lease itself before it runs (a send, a resume of a running session, a
 *   fork with a call in flight), keeps it renewed while it runs (LeaseKeeper), and lets it go
 *   once it waits for the user, is done or is closed — in the write that saves it at rest
 *   (`giveUpWithWrite`), or after it when that write could not. A waiting session holds
 *   none, so any process (or server) may send it the next event. A lease held by a process
 *   of this machine that no longer exists (holder-process.ts) is taken at once, unexpired.
 */
import { plainCodeOf } from './send-codes.js';
import { performance } from 'node:perf_hooks';
import { LeaseLostError, SessionLeasedError, SessionNotFoundError } from '../core/errors.js';
import { holderGone } from '../store/holder-process.js';
import { LeaseKeeper } from '../store/lease-keeper.js';
import type { Lease, LeasedLoad, LeaseOps, SessionStore, StoredSession } from '../store/session-store.js';
import type { SendError } from './session.js';

/**
 * The lease a write takes for a session its holder keeps loaded between runs (SessionHost):
 * asked by the session's journal before each write, told how that write ended.
 */
export interface WriteGrants {
  /**
   * While no lease is held and the holder keeps the session loaded between runs: the grant
   * the next write that starts a run is to take in its own statement (LeaseOps.appendAcquiring).
   * Null otherwise.
   */
  grantWanted(): WantedGrant | null;
  /**
   * That write committed, its statement sent at `askedAt` (performance.now()): under `lease`,
   * or, a write at rest, with the grant given up at once (null: the next write that starts a
   * run takes one again).
   */
  granted(lease: Lease | null, askedAt: number): void;
  /** That write was not made: the session as stored now, and the lease when it was free (the holder's to use or give back), its statement sent at `askedAt`. */
  notGranted(stale: LeasedLoad, askedAt: number): void;
}

export interface SessionLeasing extends WriteGrants {
  /** The lease this session's writes are fenced with now (a lost one too: its writes then fail). */
  readonly current: Lease | undefined;
  /** Why the lease was lost, once it was. */
  readonly lostMessage: string | undefined;
  /** Called when the lease is lost: the session stops (an in-flight model call is aborted). */
  onLost(stop: () => void): void;
  /**
   * Before a send: holds the lease. A grant made just now comes back with the session as its
   * statement read it (`read`, when it was read with it); null: held already. Throws
   * SessionLeasedError.
   */
  hold(): Promise<{ read: StoredSession | undefined } | null>;
  /** A write fenced by the current lease committed. */
  wrote(): void;
  /**
   * Before each model call: resolves when the lease is (still) held; otherwise (lost, or
   * unconfirmed for a whole lease: the process was paused) stops the session and rejects,
   * so no call is made.
   */
  beforeModelCall(): Promise<void>;
  /** The session waits, is done or closed: the lease is given up. */
  letGo(): Promise<void>;
  /**
   * The session waits or is done, and a write is about to save it: true when that write is to
   * give the lease up too (AppendInput.releaseLease: one round trip, not two). After true,
   * nothing more is written under this lease; `gaveUp` says how the write ended.
   */
  giveUpWithWrite(): boolean;
  /** The write `giveUpWithWrite` allowed settled (committed: the lease is released). */
  gaveUp(committed: boolean): void;
}

/** A lease a write is to take: who takes it, and for how long. */
export interface WantedGrant {
  owner: string;
  ms: number;
}

/**
 * How the holder of a passed lease keeps the session loaded between runs (SessionHost keeps
 * sessions loaded while they wait): at rest the session's write gives the lease up, and
 * the next write that starts a run takes a new one in the same statement, so a send costs
 * that write and the one at rest, with no statement before them to lease and load.
 */
export interface LeaseRearm extends WriteGrants {
  /** The lease held now; undefined while none is (the session waits, or its next write is taking one). */
  current(): Lease | undefined;
}

/**
 * How the holder of a passed lease lets the session's last write of a run give it up
 * (SessionHost: only while one request uses the session; see held-sessions.ts).
 */
export interface LeaseHandOver {
  /** May the write that saves the session at rest give the lease up? After true, the holder hands the session to no one else under it. */
  atRest(): boolean;
  /** That write settled (committed: the lease is released). */
  settled(committed: boolean): void;
}

/** Stops the session and rejects unless `held`: a model call never starts on a lease not known to be held. */
async function gate(held: Promise<boolean>, stop: () => void, sessionId: string, lostMessage: () => string | undefined): Promise<void> {
  if (await held) return;
  stop();
  throw new LeaseLostError(sessionId, lostMessage());
}

/**
 * A lease the caller holds and renews; `isHeld` (optional) tells before each model call whether
 * it still does; `rearm` (optional): the caller keeps the session loaded between runs.
 */
export class PassedLease implements SessionLeasing {
  readonly lostMessage = undefined;
  private stop: () => void = () => {};
  constructor(
    private readonly passed: Lease,
    private readonly isHeld?: () => Promise<boolean>,
    private readonly handOver?: LeaseHandOver,
    private readonly rearm?: LeaseRearm,
  ) {}

  get current(): Lease | undefined {
    return this.rearm ? this.rearm.current() : this.passed;
  }

  grantWanted(): WantedGrant | null {
    return this.rearm?.grantWanted() ?? null;
  }

  granted(lease: Lease | null, askedAt: number): void {
    this.rearm?.granted(lease, askedAt);
  }

  notGranted(stale: LeasedLoad, askedAt: number): void {
    this.rearm?.notGranted(stale, askedAt);
  }

  onLost(stop: () => void): void {
    this.stop = stop;
  }
  async hold(): Promise<null> {
    return null;
  }
  wrote(): void {}
  beforeModelCall(): Promise<void> {
    return gate(
      this.isHeld ? this.isHeld() : Promise.resolve(true),
      () => this.stop(),
      this.passed.sessionId,
      () => undefined,
    );
  }
  async letGo(): Promise<void> {}
  giveUpWithWrite(): boolean {
    return this.handOver?.atRest() ?? false;
  }
  gaveUp(committed: boolean): void {
    this.handOver?.settled(committed);
  }
}

/** A lease the session takes and renews itself, while it runs. */
export class OwnLease implements SessionLeasing {
  private keeper: LeaseKeeper | null = null;
  private letting: Promise<void> | null = null;
  private wroteUnderGrant = false;
  /** The keeper whose lease the write under way gives up. */
  private handing: LeaseKeeper | null = null;
  /** Why the last lease was lost, kept after it was let go. */
  private lostWhy: string | undefined;
  private stop: () => void = () => {};

  constructor(
    private readonly leases: LeaseOps,
    readonly sessionId: string,
    private readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  get current(): Lease | undefined {
    return this.keeper?.lease;
  }

  get lostMessage(): string | undefined {
    return this.keeper?.lost ? this.keeper.lostMessage : this.lostWhy;
  }

  onLost(stop: () => void): void {
    this.stop = stop;
  }

  async hold(): Promise<{ read: StoredSession | undefined } | null> {
    await this.letting;
    // A write giving the lease up is under way (this send came as the last one's write began):
    // once it committed, that lease is gone, and this send takes a new one.
    if (this.keeper?.givingUpWrite && (await this.keeper.givingUpWrite)) await this.letGo();
    // Held already, or lost: then the session is stopped and its writes fail, fenced by it.
    if (this.keeper) return null;
    let askedAt = performance.now();
    // The grant and the session in one statement: a send checks what it read (leaseForSend).
    const found = await this.leases.acquireAndLoad(this.sessionId, this.owner, this.leaseMs);
    if (!found.stored) throw new SessionNotFoundError(this.sessionId);
    let lease = found.lease;
    const read = lease ? found.stored : undefined;
    if (!lease) {
      let holder = found.holder;
      // A holder on this machine whose process is gone (killed mid-call) renews nothing: its
      // lease is taken now, not once it runs out, by the same guarded statement.
      if (holder && holderGone(holder.process)) {
        askedAt = performance.now();
        lease = await this.leases.acquireLease(this.sessionId, this.owner, this.leaseMs, { goneToken: holder.token });
        if (!lease) holder = await this.leases.holder(this.sessionId);
      }
      if (!lease) throw new SessionLeasedError(this.sessionId, holder?.owner ?? null, holder?.expiresInMs ?? null);
    }
    this.wroteUnderGrant = false;
    this.keeper = new LeaseKeeper(
      this.leases,
      lease,
      this.leaseMs,
      () => this.stop(),
      () => {},
      askedAt,
    );
    return { read };
  }

  wrote(): void {
    this.wroteUnderGrant = true;
  }

  /** Its own lease is taken before a send (hold), never by a write. */
  grantWanted(): null {
    return null;
  }
  granted(): void {}
  notGranted(): void {}

  beforeModelCall(): Promise<void> {
    return gate(
      this.keeper ? this.keeper.ensureHeld() : Promise.resolve(false),
      () => this.stop(),
      this.sessionId,
      () => this.lostMessage,
    );
  }

  giveUpWithWrite(): boolean {
    // A send that comes meanwhile waits for the write in hold(), then takes a lease of its own.
    if (!this.keeper?.isHeld()) return false;
    this.handing = this.keeper;
    this.keeper.givingUpWithWrite();
    return true;
  }

  gaveUp(committed: boolean): void {
    this.handing?.givenUp(committed);
    this.handing = null;
  }

  async letGo(): Promise<void> {
    const keeper = this.keeper;
    if (!keeper) return this.letting ?? undefined;
    this.keeper = null;
    if (keeper.lost) this.lostWhy = keeper.lostMessage;
    // A grant that wrote nothing leaves the session's last write to whoever made it (see LeaseOps.releaseLease).
    this.letting = keeper.release(this.wroteUnderGrant ? undefined : { unused: true }).finally(() => (this.letting = null));
    return this.letting;
  }
}

/**
 * Before a send: holds the session's lease; the send's error when it cannot. A fresh grant
 * is checked against the store: another process may have moved the session on since this
 * object loaded it, and a model call on a stale state would only end in a conflict.
 */
export async function leaseForSend(
  leasing: SessionLeasing,
  store: SessionStore,
  id: string,
  revision: number,
): Promise<Exclude<SendError, { code: 'event_refused' | 'not_a_decider' }> | undefined> {
  try {
    const grant = await leasing.hold();
    if (!grant) return undefined;
    const stored = grant.read ?? (await store.load(id));
    if (stored?.revision === revision) return undefined;
    await leasing.letGo();
    return {
      code: 'conflict',
      message:
        `Session "${id}" was changed by another process since this object loaded it (revision ${revision} → ` +
        `${String(stored?.revision)}): nothing was sent. Open it again with runtime.resumeSession(id).`,
    };
  } catch (error) {
    if (SessionLeasedError.isInstance(error)) return { code: 'session_running_elsewhere', message: error.message, holder: error.holder };
    const message = error instanceof Error ? error.message : String(error);
    // A store's own failure keeps its code; anything else taking the lease can throw is Steward's bug.
    return { code: plainCodeOf(error), message };
  }
}
