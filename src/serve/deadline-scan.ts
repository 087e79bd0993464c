/**
 * No timer of a `steward serve` process fires a wait's deadline: the sessions it keeps loaded
 * while they wait arm none (held-sessions.ts), and the others are in the store only. Every few
 * seconds it asks the store for the deadlines that are due (`dueDeadlines`) and fires each one
 * through the session, held as a send holds it — under its lease on PostgreSQL, so of several
 * servers scanning one database exactly one fires it; the others find the lease taken, or
 * (once it is let go) a deadline that has moved on, which the session does not send again
 * (Session.passDeadline). A kept copy not yet checked against the store that finds the
 * deadline not its own is asked again, loaded afresh (SessionHost.fireDeadline).
 */
import type { StoredDeadline } from '../store/session-store.js';

/** How often a server looks for due deadlines (a deadline is a matter of minutes or hours: a few seconds late is on time). */
export const DEADLINE_SCAN_MS = 5_000;

/** What the scan needs of the server it fires for. */
export interface DeadlineTarget {
  /** Epoch ms now, on the runtime's clock. */
  now(): number;
  dueDeadlines(now: string, limit: number): Promise<Array<{ sessionId: string; deadline: StoredDeadline }>>;
  /** Fires one; true when it was sent (false: not this server's to fire, or no longer due). */
  fire(sessionId: string, deadline: StoredDeadline): Promise<boolean>;
  draining(): boolean;
  log(message: string): void;
}

/** A deadline that did not fire (its session would not load, or its lease is elsewhere) is tried again this much later. */
const RETRY_AFTER_MS = 60_000;
/** Deadlines waiting to be tried again, at most: beyond it, the oldest is tried at the next scan. */
const MAX_RETRYING = 10_000;

export class DeadlineScan {
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<string[]> | null = null;
  /** Sessions whose deadline did not fire, and when to try again: they do not hold up the deadlines behind them. */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly target: DeadlineTarget) {}

  /** Scans every `everyMs` from now on, the first at once. */
  start(everyMs = DEADLINE_SCAN_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.scan(), everyMs);
    this.timer.unref();
    void this.scan();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One scan now (one at a time: a scan asked for while one runs gets that one's answer); the ids whose deadline this server fired. */
  scan(limit = 20): Promise<string[]> {
    this.scanning ??= this.fireDue(limit).finally(() => (this.scanning = null));
    return this.scanning;
  }

  private later(sessionId: string, now: number): void {
    if (this.retryAt.size >= MAX_RETRYING) this.retryAt.delete(this.retryAt.keys().next().value!);
    this.retryAt.set(sessionId, now + RETRY_AFTER_MS);
  }

  private async fireDue(limit: number): Promise<string[]> {
    const { target } = this;
    if (target.draining()) return [];
    const fired: string[] = [];
    try {
      const now = target.now();
      for (const [id, at] of this.retryAt) if (at <= now) this.retryAt.delete(id);
      // Asked for as many more as wait to be tried again, so that those do not take the places of the others.
      const due = await target.dueDeadlines(new Date(now).toISOString(), Math.min(limit + this.retryAt.size, 1000));
      for (const { sessionId, deadline } of due) {
        if (target.draining()) break;
        if (this.retryAt.has(sessionId)) continue;
        // One session's failure (a lease held elsewhere, a broken snapshot) is that session's: the others still fire.
        const sent = await target.fire(sessionId, deadline).catch((error: unknown) => {
          target.log(`serve: the deadline of session ${sessionId} did not fire (will retry): ${error instanceof Error ? error.message : String(error)}`);
          return false;
        });
        if (sent) fired.push(sessionId);
        else this.later(sessionId, now);
      }
    } catch (error) {
      target.log(`serve: the deadline scan failed (will retry): ${error instanceof Error ? error.message : String(error)}`);
    }
    return fired;
  }
}
