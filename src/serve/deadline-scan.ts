/**
 * A `steward serve` process keeps no session loaded while it waits, so no timer of its own
 * fires a wait's deadline: every few seconds it asks the store for the deadlines that are due
 * (`dueDeadlines`) and fires each one through the session, loaded as a send loads it — under
 * its lease on PostgreSQL, so of several servers scanning one database exactly one fires it;
 * the others find the lease taken, or (once it is let go) a deadline that has moved on, which
 * the session does not send again (Session.passDeadline).
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

export class DeadlineScan {
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<string[]> | null = null;

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

  private async fireDue(limit: number): Promise<string[]> {
    const { target } = this;
    if (target.draining()) return [];
    const fired: string[] = [];
    try {
      const due = await target.dueDeadlines(new Date(target.now()).toISOString(), limit);
      for (const { sessionId, deadline } of due) {
        if (target.draining()) break;
        // One session's failure (a lease held elsewhere, a broken snapshot) is that session's: the others still fire.
        const sent = await target.fire(sessionId, deadline).catch((error: unknown) => {
          target.log(`serve: the deadline of session ${sessionId} did not fire (will retry): ${error instanceof Error ? error.message : String(error)}`);
          return false;
        });
        if (sent) fired.push(sessionId);
      }
    } catch (error) {
      target.log(`serve: the deadline scan failed (will retry): ${error instanceof Error ? error.message : String(error)}`);
    }
    return fired;
  }
}
