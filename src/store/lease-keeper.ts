/**
 * Keeps one lease alive while a process runs its session (a `steward serve` send or
 * takeover, or a runtime running a session on its own: CLI `run`, `send`, `resume`, an
 * app's code): renews it every third of the lease, so two renewals may fail before it
 * expires. When a renewal finds the lease gone, or the database has not confirmed it for a
 * whole lease, the lease is lost and `onLost` runs at once (the holder stops the session,
 * aborting an in-flight model call), because another process may already run it; the
 * store's fence would refuse this process's writes anyway.
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
  /** When the database last confirmed the lease: the start of the statement that granted or renewed it (monotonic ms). */
  private confirmedAt: number;
  private renewing: Promise<void> | null = null;
  private released = false;
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
    this.confirmedAt = grantedAt;
    this.timer = setInterval(() => void this.renew(), Math.max(10, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  /** Whether the lease is known to be held now: not lost or released, and confirmed less than a lease ago. */
  isHeld(): boolean {
    if (this.lost || this.released) return false;
    if (performance.now() - this.confirmedAt < this.leaseMs) return true;
    this.lose(`the database has not confirmed it for ${this.leaseMs} ms (was this process paused?)`);
    return false;
  }

  /**
   * Before a model call: true when the lease is held. Confirmed over half a lease ago, it is
   * renewed first (one round trip), so a call never starts on a lease about to run out.
   */
  async ensureHeld(): Promise<boolean> {
    if (!this.isHeld()) return false;
    if (performance.now() - this.confirmedAt >= this.leaseMs / 2) await this.renew();
    return this.isHeld();
  }

  /** Stops renewing and gives the lease up. `unused`: see LeaseOps.releaseLease. */
  async release(options?: { unused?: boolean }): Promise<void> {
    this.stopTimer();
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
    // Woken after a whole lease without a confirmation: lost, whatever the database says next.
    if (!this.isHeld()) return;
    const started = performance.now();
    try {
      if (await this.leases.renewLease(this.lease, this.leaseMs)) {
        if (!this.lost) this.confirmedAt = started;
      } else this.lose('the lease expired and was taken over, or released');
    } catch (error) {
      // The database did not answer: keep trying until the lease would have run out.
      if (performance.now() - this.confirmedAt >= this.leaseMs)
        this.lose(`the database could not renew it for ${this.leaseMs} ms (${error instanceof Error ? error.message : String(error)})`);
    }
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

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
