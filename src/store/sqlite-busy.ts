/**
 * Waiting for another process's SQLite lock without stopping this process. better-sqlite3 is
 * synchronous: with SQLite's own busy handler (`busy_timeout`) a write that meets another
 * writer's lock sleeps inside the call and blocks the event loop for up to the whole
 * timeout — every other request of a server, its health check and its timers with it. So
 * the connection runs with `busy_timeout = 0` once it is set up: an operation that meets a
 * lock fails at once with SQLITE_BUSY (a failed BEGIN IMMEDIATE holds nothing, a failed
 * COMMIT is rolled back by better-sqlite3), and is run again after an awaited timer, until
 * the same total timeout has passed. Meanwhile reads (WAL needs no lock for them) and
 * everything else of this process go on.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Pauses between attempts, growing as SQLite's own busy handler does (sqliteDefaultBusyCallback). */
const PAUSES_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

/** SQLITE_BUSY and its extended codes (_RECOVERY, _SNAPSHOT, _TIMEOUT): another connection holds what this one needs. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Runs operations of one connection, retrying those that meet a lock; counts the ones waiting. */
export class LockWaits {
  private waiting = 0;

  constructor(private readonly timeoutMs: number) {}

  /** True while an operation waits for a lock another connection holds. */
  get busy(): boolean {
    return this.waiting > 0;
  }

  /**
   * Runs `attempt` (synchronous, all or nothing: a statement or a whole transaction) until it
   * does not fail with SQLITE_BUSY, or `timeoutMs` has passed; then its last SQLITE_BUSY is
   * thrown. Any other failure is thrown at once.
   */
  async run<T>(attempt: () => T): Promise<T> {
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error)) throw error;
    }
    this.waiting += 1;
    try {
      const deadline = performance.now() + this.timeoutMs;
      for (let i = 0; ; i++) {
        const left = deadline - performance.now();
        // Not unref'd: a process that waits to save must not exit before it has.
        await sleep(Math.max(0, Math.min(PAUSES_MS[Math.min(i, PAUSES_MS.length - 1)]!, left)));
        try {
          return attempt();
        } catch (error) {
          if (!isBusy(error) || performance.now() >= deadline) throw error;
        }
      }
    } finally {
      this.waiting -= 1;
    }
  }
}
