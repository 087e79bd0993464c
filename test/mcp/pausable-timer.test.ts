/** A call's time limit stands still while a person answers its server's question (fake timers: no waiting). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LONGEST_TIMER_MS, PausableTimer } from '../../src/mcp/pausable-timer.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PausableTimer', () => {
  it('counts only the time it runs: a pause keeps what is left', () => {
    const expired = vi.fn();
    const timer = new PausableTimer(1_000, expired);
    vi.advanceTimersByTime(600);
    timer.pause();
    vi.advanceTimersByTime(3_600_000);
    expect(expired).not.toHaveBeenCalled();
    timer.resume();
    vi.advanceTimersByTime(399);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
    // Once expired, it stays so.
    timer.resume();
    vi.advanceTimersByTime(10_000);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('never fires once cleared, and pause or resume twice changes nothing', () => {
    const expired = vi.fn();
    const timer = new PausableTimer(1_000, expired);
    timer.resume();
    vi.advanceTimersByTime(500);
    timer.pause();
    timer.pause();
    vi.advanceTimersByTime(5_000);
    timer.resume();
    vi.advanceTimersByTime(499);
    timer.clear();
    vi.advanceTimersByTime(5_000);
    expect(expired).not.toHaveBeenCalled();
  });

  it('counts a limit longer than Node’s longest delay (which would fire at once) in several timers', () => {
    const expired = vi.fn();
    new PausableTimer(LONGEST_TIMER_MS * 2 + 10, expired);
    vi.advanceTimersByTime(1_000);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(LONGEST_TIMER_MS * 2 + 9 - 1_000);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });
});
