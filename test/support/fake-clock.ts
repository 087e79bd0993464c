/**
 * A clock a test moves by hand (createRuntime({ clock })): `now()` stands still until
 * `advance(ms)`, which runs every timer that came due, in due order. Nothing depends on how
 * fast the machine is: a deadline fires when the test says the time has come, and not before.
 */
import type { DeadlineClock } from '../../src/runtime/session-deadline.js';

export interface FakeClock extends DeadlineClock {
  /** Moves the clock on by `ms` and runs the timers that came due; resolves once the sends they started have been queued. */
  advance(ms: number): Promise<void>;
  /** Moves the clock on by `ms` without running any timer: one that is late (a busy process) has not fired yet. */
  skip(ms: number): void;
  /** Timers armed and not yet run or cancelled. */
  readonly pending: number;
}

export function fakeClock(start = Date.parse('2026-12-06T09:00:00Z')): FakeClock {
  let now = start;
  let next = 0;
  const timers = new Map<number, { at: number; fire: () => void }>();
  return {
    now: () => now,
    setTimer(ms, fire) {
      const id = next++;
      timers.set(id, { at: now + Math.max(0, ms), fire });
      // Even one due now waits for the next advance(): the test decides when time moves.
      return () => timers.delete(id);
    },
    async advance(ms) {
      now += ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= now).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        due[1].fire();
      }
      await new Promise((resolve) => setImmediate(resolve));
    },
    skip(ms) {
      now += ms;
    },
    get pending() {
      return timers.size;
    },
  };
}
