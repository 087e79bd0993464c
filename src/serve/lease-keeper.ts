/**
 * Keeps one lease alive while a server holds its session: renews it every third of the
 * lease (so two renewals may fail before it expires). When a renewal finds the lease gone,
 * or the database has not confirmed it for a whole lease, the session is stopped at once —
 * an in-flight model call is aborted — because another server may already run it; the
 * store's fence would refuse this server's writes anyway.
 */
import type { Lease, LeaseOps } from '../store/session-store.js';

export class LeaseKeeper {
  private timer: NodeJS.Timeout | null;
  private confirmedAt = Date.now();
  private renewing = false;
  private released = false;
  lost = false;
  lostMessage = '';

  constructor(
    private readonly leases: LeaseOps,
    readonly lease: Lease,
    private readonly leaseMs: number,
    private readonly onLost: () => void,
    private readonly log: (message: string) => void,
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(10, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing and gives the lease up (it expires now: a running session may be taken over at once). */
  async release(): Promise<void> {
    this.stopTimer();
    if (this.released || this.lost) return;
    this.released = true;
    await this.leases.releaseLease(this.lease).catch((error: unknown) => this.log(`serve: could not release the lease on ${this.lease.sessionId} (it expires by itself): ${String(error)}`));
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.released || this.lost) return;
    this.renewing = true;
    const started = Date.now();
    try {
      if (await this.leases.renewLease(this.lease, this.leaseMs)) this.confirmedAt = started;
      else this.lose('the lease expired and was taken over, or released');
    } catch (error) {
      // The database did not answer: keep trying until the lease would have run out.
      if (Date.now() - this.confirmedAt >= this.leaseMs) this.lose(`the database could not renew it for ${this.leaseMs} ms (${error instanceof Error ? error.message : String(error)})`);
    } finally {
      this.renewing = false;
    }
  }

  private lose(why: string): void {
    if (this.released || this.lost) return;
    this.lost = true;
    this.lostMessage = `This server lost its lease on session "${this.lease.sessionId}": ${why}. The session was stopped here and continues on the server that holds it; reload it to see where it is.`;
    this.stopTimer();
    this.log(`serve: ${this.lostMessage}`);
    this.onLost();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
