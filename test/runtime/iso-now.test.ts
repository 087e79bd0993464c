/** The event stamp writes what Date.prototype.toISOString writes, around and across second boundaries. */
import { describe, expect, it } from 'vitest';
import { isoAt, isoNow } from '../../src/runtime/iso-now.js';

describe('isoAt', () => {
  it('matches toISOString for every millisecond around second, day and year boundaries, in any order', () => {
    const starts = [0, Date.UTC(2026, 11, 31, 23, 59, 59), Date.UTC(2024, 1, 29, 12, 0, 0), 1_764_590_000_000];
    const times = starts.flatMap((t) => Array.from({ length: 2_100 }, (_, i) => t - 50 + i));
    // Forwards, then shuffled (a later call for an earlier second must not reuse the prefix).
    for (const ms of [...times, ...[...times].sort((a, b) => ((a * 7919) % 1000) - ((b * 7919) % 1000))]) {
      expect(isoAt(ms), String(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('isoNow is the current time', () => {
    const before = Date.now();
    const at = Date.parse(isoNow());
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
