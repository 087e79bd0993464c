/**
 * A call's time limit that stands still while a person answers a question its server asked on
 * the live connection: the limit is for the server's work, not for a person's reading. The
 * SDK's own `timeout` counts a request from start to end and cannot be paused, so the host
 * gives the SDK the longest delay Node takes and keeps the real limit here.
 */

/** The longest delay `setTimeout` takes (a longer one fires at once). */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

export class PausableTimer {
  private left: number;
  private since = 0;
  private timer: NodeJS.Timeout | null = null;
  private done = false;

  /** Counts `ms` from now; `onExpired` runs once when they are used up while running. */
  constructor(
    ms: number,
    private readonly onExpired: () => void,
  ) {
    this.left = ms;
    this.resume();
  }

  /** Stops the count; the time left is kept. */
  pause(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.left -= performance.now() - this.since;
  }

  /** Counts on from where `pause()` stopped. */
  resume(): void {
    if (this.done || this.timer !== null) return;
    this.since = performance.now();
    // A limit longer than one timer takes is counted in several.
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.left -= performance.now() - this.since;
        if (this.left > 0) return this.resume();
        this.done = true;
        this.onExpired();
      },
      Math.min(Math.max(0, this.left), LONGEST_TIMER_MS),
    );
  }

  /** Never fires again. */
  clear(): void {
    this.done = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
