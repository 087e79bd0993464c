/**
 * A session's deadline in time. The chart keeps which rule of the open wait's deadline is
 * current (`waits.deadline`, deadlines.ts) but reads no clock; here that rule becomes a due
 * time, kept in the store with the journal entry that opened it (so a restart or another
 * server finds the same time, never a later one), and a timer armed by whoever holds the
 * session. When it fires, the session sends the chart `deadline_passed` for that wait and
 * rule — once: the stored due time moves with the write that applies it, and a deadline the
 * chart no longer has is refused there.
 */
import { intervalMs } from '../core/machines/deadlines.js';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import type { StoredDeadline } from '../store/session-store.js';

/**
 * The clock deadlines are armed on: the system's by default; tests pass one they move.
 *
 * @example
 * createRuntime({ model, store, clock: { now: () => fakeNow, setTimer: (ms, fire) => schedule(fakeNow + ms, fire) } });
 */
export interface DeadlineClock {
  /** Epoch milliseconds now. */
  now(): number;
  /** Calls `fire` once, `ms` from now (0: as soon as it can); returns what cancels it. */
  setTimer(ms: number, fire: () => void): () => void;
}

/** Node's timers take at most about 24.8 days; a longer wait is armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The system clock: Date.now and unref'd timers (a deadline never keeps a process alive). */
export const systemClock: DeadlineClock = {
  now: () => Date.now(),
  setTimer(ms, fire) {
    let timer: NodeJS.Timeout;
    const due = Date.now() + ms;
    const arm = () => {
      const left = due - Date.now();
      timer = setTimeout(left > MAX_TIMER_MS ? arm : fire, Math.max(0, Math.min(left, MAX_TIMER_MS)));
      timer.unref();
    };
    arm();
    return () => clearTimeout(timer);
  },
};

/** Whether the session waits for a person (the state value's top key, read directly: this runs on every snapshot). */
export const isWaiting = (s: SessionSnapshot): boolean => s.status === 'active' && typeof s.value === 'object' && Object.hasOwn(s.value, 'waiting_user');

/**
 * The deadline a session has at `snapshot`: the one kept (`kept`) when it is for the same wait
 * and rule, else a new one due the rule's interval from `now`; null when the session does not
 * wait or its wait has no deadline.
 *
 * @example
 * const deadline = deadlineAt(session.actorRef.getSnapshot(), stored.deadline, Date.now()); // { wait: 4, level: 0, dueAt: '…' }
 */
export function deadlineAt(snapshot: SessionSnapshot, kept: StoredDeadline | null, now: number): StoredDeadline | null {
  const rule = isWaiting(snapshot) ? snapshot.context.waits.deadline : null;
  if (!rule) return null;
  const wait = snapshot.context.waits.opened;
  if (kept && kept.wait === wait && kept.level === rule.level) return kept;
  return { wait, level: rule.level, dueAt: new Date(now + intervalMs(rule.after)).toISOString() };
}

/** The deadline of one live session: what the store keeps, and the timer armed for it. */
export class SessionDeadline {
  private cancel: (() => void) | null = null;
  private armed: StoredDeadline | null = null;
  /** No timer while paused (pause): someone else fires the deadline. */
  private paused = false;

  constructor(
    private readonly clock: DeadlineClock,
    /** The deadline as the store holds it (null: none). */
    private kept: StoredDeadline | null,
    /** Called when the armed deadline is due. */
    private readonly due: (deadline: StoredDeadline) => void,
  ) {}

  /** The deadline as the store holds it, or as the next write will. */
  get current(): StoredDeadline | null {
    return this.kept;
  }

  /** Follows the session to `snapshot`: keeps its deadline (a new due time only for a new wait or rule) and arms its timer. */
  follow(snapshot: SessionSnapshot): StoredDeadline | null {
    this.kept = deadlineAt(snapshot, this.kept, this.clock.now());
    if (this.kept !== this.armed && !this.paused) this.arm(this.kept);
    return this.kept;
  }

  /** Paused: no timer (its holder keeps the session loaded while it waits; a scan fires the deadline). Resumed: armed again. */
  pause(paused: boolean): void {
    this.paused = paused;
    if (paused) this.stop();
    else this.arm(this.kept);
  }

  /** The session's deadline when it is due now (its timer may not have fired yet), else null. */
  overdue(): StoredDeadline | null {
    return this.kept && Date.parse(this.kept.dueAt) <= this.clock.now() ? this.kept : null;
  }

  /** Whether `deadline` is the one the session has now (a timer or a scan that fired for another is late). */
  isCurrent(deadline: StoredDeadline): boolean {
    return this.kept !== null && this.kept.wait === deadline.wait && this.kept.level === deadline.level;
  }

  /** No timer any more (the session stopped or closed here). */
  stop(): void {
    this.cancel?.();
    this.cancel = null;
    this.armed = null;
  }

  private arm(deadline: StoredDeadline | null): void {
    this.stop();
    this.armed = deadline;
    if (!deadline) return;
    const ms = Math.max(0, Date.parse(deadline.dueAt) - this.clock.now());
    this.cancel = this.clock.setTimer(ms, () => {
      this.cancel = null;
      this.due(deadline);
    });
  }
}
