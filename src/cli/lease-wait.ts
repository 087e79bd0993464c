/**
 * Waiting out another process's lease on a session (PostgreSQL), for `steward resume`. A
 * process that died mid-call leaves its lease to run out, unless the runtime can prove it
 * gone (a process of this machine: taken over at once). Its holder may be on another host,
 * or an older Steward: then nothing tells a dead holder from a live one but the lease
 * itself. So resume tries again until the lease it found has had time to run out, saying
 * how long that may be, and ends with the error only if the lease is held still: renewed,
 * so its holder lives and runs the session (or another process took it first).
 */
import { performance } from 'node:perf_hooks';
import { SessionLeasedError } from '../core/errors.js';

export interface LeaseWaitOptions {
  /** false: the first SessionLeasedError ends it (`--fail-fast`). */
  wait: boolean;
  /** Told once, when the wait begins (one line, not yet made terminal-safe). */
  say: (line: string) => void;
  /** How often to try again meanwhile (ms, default 1000): a holder that lets go, or dies on this machine, is seen then. */
  everyMs?: number;
}

/**
 * Runs `attempt` until it does not fail with SessionLeasedError, for as long as the lease the
 * first failure named lasts unrenewed; other errors, and that one once the lease should have
 * run out, are thrown.
 *
 * @example
 * const session = await retryWhileLeased(() => runtime.resumeSession(id), { wait: true, say: (line) => console.error(line) });
 */
export async function retryWhileLeased<T>(attempt: () => Promise<T>, { wait, say, everyMs = 1000 }: LeaseWaitOptions): Promise<T> {
  let deadline: number | undefined;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!wait || !SessionLeasedError.isInstance(error)) throw error;
      const now = performance.now();
      if (deadline === undefined) {
        // Counted from the answer, which came after the database measured the lease: the
        // first try at or after the deadline finds it run out, unless it was renewed.
        deadline = now + (error.expiresInMs ?? 0);
        if (error.expiresInMs !== null)
          say(
            `Waiting up to ${Math.max(1, Math.ceil(error.expiresInMs / 1000))} s for the lease held by ${error.holder ?? 'another process'} to run out ` +
              '(--fail-fast: fail at once).',
          );
      } else if (now >= deadline) throw error;
      const pause = Math.min(everyMs, Math.max(0, deadline - now));
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
