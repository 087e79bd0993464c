/**
 * Keeps one lease alive while a process runs its session (a `steward serve` send or
 * takeover, or a runtime running a session on its own: CLI `run`, `send`, `resume`, an
 * app's code): renews it every third of the lease, so two renewals may fail before it
 * expires. When a renewal finds the lease gone, the lease is lost and `onLost` runs at once
 * (the holder stops the session, aborting an in-flight model call), because another process
 * may already run it; the store's fence would refuse this process's writes anyway.
 *
 * A renewal can also just not come back (its statement waits on a lock, the database or
 * this process is overloaded). The lease then ends here on its own clock: a timer set at
 * each confirmation fires a tenth of a lease before the database could let another process
 * claim it (whose clock starts when the renewal's statement ran, later than it was sent),
 * whether or not a renewal is still under way. So a late renewal stops the session before
 * another server can start it, not after: the tenth absorbs a timer that fires late on a
 * busy event loop.
 *
 * Time since the last confirmation is read on the monotonic clock (`performance.now()`),
 * which keeps counting while the process is paused (SIGSTOP, a VM frozen): a process that
 * wakes after a whole lease knows its lease is not held before anything it does reaches a
 * model or a client (`isHeld()`, `ensureHeld()`), without waiting for the database.
 */
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Lease, LeaseOps } from './session-store.js';

/** How long a lease lasts without renewal (renewed every third of it). */
export const DEFAULT_LEASE_MS = 30_000;

/** A lease owner others can read: who holds the session, e.g. "steward send on web-3 pid 4711". */
export function leaseOwnerName(what: string): string {
  return `${what} on ${hostname()} pid ${process.pid}`;
}

export class LeaseKeeper {
  private timer: NodeJS.Timeout | null;
  private deadline: NodeJS.Timeout | null = null;
  /** When the database last confirmed the lease: the start of the statement that granted or renewed it (monotonic ms). */
  private confirmedAt: number;
  /** How long after a confirmation the lease counts as held here: a tenth short of the database's. */
  private readonly heldMs: number;
  private renewing: Promise<void> | null = null;
  /** Settles once the lease is lost, released or abandoned: nobody waits on a renewal past that. */
  private readonly ended: Promise<void>;
  private end: () => void = () => {};
  private released = false;
  /** The write that gives the lease up (AppendInput.releaseLease), from when it is handed the lease until it settles. */
  private givingUp: Promise<boolean> | null = null;
  private gaveUp: (committed: boolean) => void = () => {};
  lost = false;
  lostMessage = '';

  /** `grantedAt`: when the statement that granted the lease was sent (performance.now()); default now. */
  constructor(
    private readonly leases: LeaseOps,
    readonly lease: Lease,
    private readonly leaseMs: number,
    private readonly onLost: () => void,
    private readonly log: (message: string) => void,
    grantedAt: number = performance.now(),
  ) {
    this.heldMs = leaseMs - leaseMs / 10;
    this.ended = new Promise((resolve) => (this.end = resolve));
    this.confirmedAt = grantedAt;
    this.timer = setInterval(() => void this.renew(), Math.max(10, Math.floor(leaseMs / 3)));
    this.timer.unref();
    this.confirmed(grantedAt);
  }

  /** Whether the lease is known to be held now: not lost, released or being given up, and confirmed less than `heldMs` ago. */
  isHeld(): boolean {
    if (this.lost || this.released || this.givingUp) return false;
    if (this.unconfirmedMs < this.heldMs) return true;
    this.lose(
      `the database has not confirmed it for ${Math.round(this.unconfirmedMs)} ms of a ${this.leaseMs} ms lease ` +
        '(renewals came too late: this process or the database is overloaded, or this process was paused)',
    );
    return false;
  }

  /** Time since the database last confirmed the lease (normally under a third of a lease plus a renewal's round trip). */
  private get unconfirmedMs(): number {
    return performance.now() - this.confirmedAt;
  }

  /**
   * Held, but unconfirmed for half a lease or more: the renewal due at a third is late (this
   * process or the database is overloaded). A model call renews first; a server takes nothing
   * over meanwhile (takeover-scan.ts).
   */
  isLate(): boolean {
    return this.isHeld() && this.unconfirmedMs >= this.leaseMs / 2;
  }

  /**
   * Before a model call: true when the lease is held. Confirmed over half a lease ago, it is
   * renewed first (one round trip), so a call never starts on a lease about to run out.
   */
  async ensureHeld(): Promise<boolean> {
    // A renewal that hangs is waited for only until the deadline ends the lease.
    if (this.isLate()) await Promise.race([this.renew(), this.ended]);
    return this.isHeld();
  }

  /**
   * The next write gives the lease up (AppendInput.releaseLease): no renewal from now on, and
   * nothing here counts as held. Call `givenUp` once that write settled.
   */
  givingUpWithWrite(): void {
    this.stopTimer();
    this.givingUp ??= new Promise((resolve) => (this.gaveUp = resolve));
  }

  /** The write giving the lease up, while there is one: resolves with whether it committed. */
  get givingUpWrite(): Promise<boolean> | null {
    return this.givingUp;
  }

  /** The write that was to give the lease up settled: committed, the lease is released; else `release()` sends the release. */
  givenUp(committed: boolean): void {
    if (committed) this.released = true;
    this.gaveUp(committed);
  }

  /** Stops renewing and gives the lease up, unless a write gave it up already. `unused`: see LeaseOps.releaseLease. */
  async release(options?: { unused?: boolean }): Promise<void> {
    this.stopTimer();
    await this.givingUp;
    if (this.released || this.lost) return;
    this.released = true;
    await this.leases
      .releaseLease(this.lease, options)
      .catch((error: unknown) => this.log(`could not release the lease on ${this.lease.sessionId} (it expires by itself): ${String(error)}`));
  }

  /** Stops renewing and leaves the lease to run out by itself (nothing sent to the store). */
  abandon(): void {
    this.stopTimer();
    this.released = true;
  }

  private renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    if (this.released || this.lost) return;
    // Woken after nine tenths of a lease without a confirmation: lost, whatever the database says next.
    if (!this.isHeld()) return;
    const started = performance.now();
    try {
      const renewed = await this.leases.renewLease(this.lease, this.leaseMs);
      // A renewal that crossed the write giving the lease up says nothing more: that write decides.
      if (this.givingUp) return;
      if (renewed) {
        if (!this.lost && !this.released) this.confirmed(started);
      } else this.lose('the lease expired and was taken over, or released');
    } catch (error) {
      if (this.givingUp) return;
      // The database did not answer: keep trying until the lease would have run out.
      if (this.unconfirmedMs >= this.heldMs)
        this.lose(`the database could not renew it for ${Math.round(this.unconfirmedMs)} ms (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  /** The database confirmed the lease as of `at`: held here until `heldMs` after it, unless confirmed again. */
  private confirmed(at: number): void {
    this.confirmedAt = Math.max(this.confirmedAt, at);
    if (this.deadline) clearTimeout(this.deadline);
    // A timer may fire a fraction of a millisecond before its time: then it is set again.
    this.deadline = setTimeout(() => this.isHeld() && this.confirmed(this.confirmedAt), Math.max(1, this.confirmedAt + this.heldMs - performance.now()));
    this.deadline.unref();
  }

  private lose(why: string): void {
    if (this.released || this.lost) return;
    this.lost = true;
    this.lostMessage =
      `${this.lease.owner} lost its lease on session "${this.lease.sessionId}": ${why}. ` +
      'The session was stopped here and continues where the lease is held now; reload it to see where it is.';
    this.stopTimer();
    this.log(this.lostMessage);
    // Not inside the caller: isHeld() runs in a session's event listeners, mid-transition.
    queueMicrotask(this.onLost);
  }

  /** No more renewals or deadline, and a caller waiting on a renewal stops waiting. */
  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.deadline) clearTimeout(this.deadline);
    this.timer = null;
    this.deadline = null;
    this.end();
  }
}

/**
 * Whether any of `keepers` renews its lease late (`isLate`): a server whose renewals are late
 * takes nothing over (takeover-scan.ts).
 *
 * @example
 * if (anyRenewsLate(held.keepers())) return []; // overloaded: no takeover now
 */
export function anyRenewsLate(keepers: Iterable<LeaseKeeper>): boolean {
  for (const keeper of keepers) if (keeper.isLate()) return true;
  return false;
}
