/**
 * Waiting for a session another request drives: until it waits for the user or is done, as
 * the store shows it. A protocol run uses it so that it never reports a thread as finished
 * while it still runs, and so that a decision that met another server running the session
 * (`session_running_elsewhere`) can be sent again once that run is over: the decision names
 * its wait, so sent again it is applied to that wait or not at all.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpError } from '../http/errors.js';
import type { SessionHost } from '../serve/session-host.js';
import type { SendResult } from '../runtime/session.js';
import type { SessionView } from '../core/view.js';

/** How often the store is read again once a live event said the session moved (the event can come before the write). */
const REREAD_MS = 20;
/** How often it is read without a live event: an event lost on the way (a dropped connection) costs at most this. */
const POLL_MS = 1000;

/**
 * `read()` again until the session it reads no longer runs, `limitMs` passed, nobody runs it
 * (a session saved mid-run whose process is gone moves only when someone resumes it), or
 * `signal` is aborted (the client left); then the last reading, maybe still running. Listens
 * to the session's live events first (from any server of the store), then reads: a wait that
 * comes between the two is not missed.
 *
 * @example
 * const thread = await untilNotRunning(host, id, () => readThread(deps, id), 60_000, request.signal);
 * if (thread.view.phase === 'running') throw new RunRefused('thread_running', '…');
 */
export async function untilNotRunning<T extends { view: Pick<SessionView, 'phase'> }>(
  host: Pick<SessionHost, 'watchLive' | 'runsNow'>,
  id: string,
  read: () => Promise<T>,
  limitMs: number,
  signal?: AbortSignal,
): Promise<T> {
  let reading = await read();
  if (reading.view.phase !== 'running') return reading;
  let moved = false;
  let wake = () => {};
  const { stop } = await host.watchLive(
    id,
    ({ event }) => {
      if (event.type !== 'waiting' && event.type !== 'done' && event.type !== 'stopped') return;
      moved = true;
      wake();
    },
    { follow: false },
  );
  const deadline = Date.now() + limitMs;
  const leave = () => wake();
  signal?.addEventListener('abort', leave, { once: true });
  /** Until a live event says the session moved (or a poll's time passed); after one, a short pause before the next read. */
  const nextMove = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, Math.min(moved ? REREAD_MS : POLL_MS, Math.max(0, deadline - Date.now()))).unref();
      moved = false;
    });
  try {
    for (reading = await read(); reading.view.phase === 'running' && Date.now() < deadline && !signal?.aborted; reading = await read()) {
      if (!(await host.runsNow(id))) {
        // Its runner may have let go between the read and the look: only a second read that still says running is stuck.
        reading = await read();
        break;
      }
      await nextMove();
    }
  } finally {
    signal?.removeEventListener('abort', leave);
    stop();
  }
  return reading;
}

/** How long a decision that meets other servers running its session keeps being sent again, at most. */
const SEND_AGAIN_MS = 60_000;

/**
 * `send()`, and while another server runs the session (`session_running_elsewhere`, as a
 * result or thrown by the host), `settle()` then `send()` again, with a growing pause (the
 * other server lets the lease go just after the session waits), for up to a minute. Only for
 * an event that names its wait: sent again, it is applied to that wait or not at all.
 *
 * @example
 * const result = await sendWhenFree(() => host.send(id, event), () => untilNotRunning(host, id, read, 60_000));
 */
export async function sendWhenFree<R extends SendResult>(send: () => Promise<R>, settle: () => Promise<unknown>): Promise<R> {
  const deadline = Date.now() + SEND_AGAIN_MS;
  for (let pause = REREAD_MS; ; pause = Math.min(pause * 2, POLL_MS)) {
    try {
      const result = await send();
      if (result.ok || result.error.code !== 'session_running_elsewhere' || Date.now() >= deadline) return result;
    } catch (error) {
      if (!(HttpError.isInstance(error) && error.code === 'session_running_elsewhere') || Date.now() >= deadline) throw error;
    }
    await settle();
    await sleep(pause);
  }
}
