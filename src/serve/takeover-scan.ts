/**
 * When and how much a `steward serve` process takes over: it scans for running sessions
 * whose lease expired (their server died or stopped) every quarter lease, and hands each one
 * it claims to its SessionHost, which runs it until it waits for the user (the call that was
 * in flight runs again, here only). The scan decides only what to claim; running a claimed
 * session is the host's (session-host.ts).
 */
import { performance } from 'node:perf_hooks';
import type { ClaimedLease, LeaseOps } from '../store/session-store.js';
import { anyRenewsLate, type LeaseKeeper } from '../store/lease-keeper.js';

/** What the scan needs of the server it claims for. */
export interface TakeoverTarget {
  readonly owner: string;
  readonly leaseMs: number;
  /** Sessions it may run at once (0: no limit). */
  readonly maxRunning: number;
  /** Sessions it runs now. */
  running(): number;
  /** It is shutting down: no more takeovers. */
  draining(): boolean;
  /** The leases it holds now. */
  keepers(): Iterable<LeaseKeeper>;
  /** Resolves once its live events are listened to: a claimed run's events reach its buffers too. */
  hear(): Promise<unknown>;
  /** Runs a claimed session; the promise settles once it has started there (or failed to). */
  adopt(lease: ClaimedLease, askedAt: number): Promise<unknown>;
  log(message: string): void;
}

export class TakeoverScan {
  private timer: NodeJS.Timeout | null = null;
  private scanning = false;
  /** A tick (scanAll) is claiming batches. */
  private takingOver = false;
  /** The last tick claimed nothing because the server's renewals were late (logged once). */
  private deferring = false;

  constructor(
    private readonly leases: LeaseOps,
    private readonly target: TakeoverTarget,
  ) {}

  /** Scans every quarter lease from now on, the first at once. */
  start(): void {
    if (this.timer) return;
    const every = Math.max(50, Math.floor(this.target.leaseMs / 4));
    this.timer = setInterval(() => void this.scanAll(), every);
    this.timer.unref();
    void this.scanAll();
  }

  /** Whether the scan ticks (started and not stopped). */
  get running(): boolean {
    return this.timer !== null;
  }

  /** No more ticks; one under way stops claiming once the server drains. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * One tick: scans again while a scan claims a full batch, since a dead server may leave
   * hundreds of sessions and waiting for the next tick between batches would add a tick per
   * batch to the last one's takeover. Each next batch waits until
   * this one's sessions have started here: a server claims no faster than it resumes, so the
   * other servers' ticks take their share of a dead server's sessions instead of one server
   * claiming them all and resuming them one after another. Claims no more than `maxRunning`
   * allows, and stops when a batch brings back a session this tick claimed already (its
   * takeover failed at once and gave the lease back: it waits for the next tick instead of a
   * busy loop). A tick while the last one still claims does nothing; a batch that takes longer
   * than a lease to start is waited for no longer. Nothing is claimed while the server's own
   * renewals run late (`renewalsLate`): a server too busy to keep its leases would lose the
   * sessions it runs, and those it claimed, to the next server's scan.
   */
  async scanAll(batch = 20): Promise<string[]> {
    if (this.takingOver) return [];
    this.takingOver = true;
    const claimed = new Set<string>();
    try {
      for (;;) {
        const { maxRunning } = this.target;
        const limit = maxRunning > 0 ? Math.min(batch, maxRunning - this.target.running()) : batch;
        if (limit <= 0 || this.target.draining() || this.renewalsLate()) break;
        const started = await this.claim(limit);
        const again = started.some(({ id }) => claimed.has(id));
        for (const { id } of started) claimed.add(id);
        if (started.length < limit || again) break;
        // At most a lease: a start that hangs (a stuck connection) must not stop this server's takeovers.
        await settledWithin(
          started.map((s) => s.started),
          this.target.leaseMs,
        );
      }
    } finally {
      this.takingOver = false;
    }
    return [...claimed];
  }

  /** One scan; resolves with the ids claimed (their runs go on in the background). */
  async scanOnce(limit = 20): Promise<string[]> {
    return (await this.claim(limit)).map((s) => s.id);
  }

  private async claim(limit: number): Promise<Array<{ id: string; started: Promise<unknown> }>> {
    const { target, leases } = this;
    if (target.draining() || this.scanning) return [];
    this.scanning = true;
    try {
      await target.hear();
      const askedAt = performance.now();
      const claimed = await leases.claimExpired(target.owner, target.leaseMs, limit);
      if (target.draining()) {
        // Drain began while the claim was under way: give them back to the other servers.
        await Promise.allSettled(claimed.map((lease) => leases.releaseLease(lease)));
        return [];
      }
      return claimed.map((lease) => ({ id: lease.sessionId, started: target.adopt(lease, askedAt) }));
    } catch (error) {
      target.log(`serve: takeover scan failed (will retry): ${error instanceof Error ? error.message : String(error)}`);
      return [];
    } finally {
      this.scanning = false;
    }
  }

  /** True when the renewal of a lease the server holds is late (`LeaseKeeper.isLate`): logged once per such spell. */
  private renewalsLate(): boolean {
    const late = anyRenewsLate(this.target.keepers());
    if (late && !this.deferring) this.target.log('serve: takeovers wait: this server renews its own leases late (it or the database is overloaded).');
    this.deferring = late;
    return late;
  }
}

/** Waits until every one of `promises` has settled, or `ms` have passed, whichever comes first. */
export async function settledWithin(promises: ReadonlyArray<Promise<unknown> | undefined>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(promises), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
