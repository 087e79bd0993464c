/**
 * The accept queue of a listening socket on 127.0.0.1 (Linux, /proc/net/tcp): connections the
 * kernel has completed that the process has not accepted yet. While the users' 1,000 sessions
 * are created, the server (sharing two cores with the users and the model) falls behind: the
 * queue fills to its 511, further connections are dropped and their clients try again 1 s, then
 * 3 s later, and actions that start in the window still wait behind that queue. The window is
 * about the steady state, so it starts once the queue has drained; the time it took is printed.
 */
import { readFileSync } from 'node:fs';
import { sleep } from './numbers.js';

/** The accept queue of the socket listening on `port`; null where it cannot be read (not Linux). */
export function acceptQueue(port: number): number | null {
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return null;
  }
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of table.split('\n')) {
    // sl local_address rem_address st tx_queue:rx_queue …; a listener (st 0A) counts its accept queue in rx_queue.
    const [, address, , state, queues] = line.trim().split(/\s+/);
    if (state === '0A' && address?.endsWith(local)) return Number.parseInt(queues?.split(':')[1] ?? '0', 16);
  }
  return null;
}

/**
 * Waits until the accept queue on `port` has stayed empty for `quietMs`, at most `maxMs`:
 * how long that took and the largest queue seen meanwhile (null where it cannot be read).
 */
export async function acceptQueueDrained(port: number, quietMs = 1_000, maxMs = 15_000): Promise<{ waitedMs: number; largest: number } | null> {
  const start = performance.now();
  let largest = 0;
  let emptySince: number | null = null;
  for (;;) {
    const queue = acceptQueue(port);
    if (queue === null) return null;
    largest = Math.max(largest, queue);
    const now = performance.now();
    if (queue > 0) emptySince = null;
    else emptySince ??= now;
    if ((emptySince !== null && now - emptySince >= quietMs) || now - start >= maxMs) return { waitedMs: now - start, largest };
    await sleep(100);
  }
}
