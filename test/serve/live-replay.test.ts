/** The replay buffers of live events: the current run only, bounded per session, in sessions and in bytes for all together, none twice to a resuming client. */
import { describe, expect, it } from 'vitest';
import { missedRecords, ReplayBuffers, type LiveRecord } from '../../src/serve/live-replay.js';

const notice = (sessionId: string, run: string, n: number, text = 'x'): LiveRecord => ({ run, n, event: { type: 'notice', sessionId, at: n, text } });

describe('ReplayBuffers', () => {
  it("keeps the current run's records: a new run replaces them; watchers get each new one", () => {
    const replay = new ReplayBuffers();
    replay.add('s', notice('s', 'a', 1));
    replay.add('s', notice('s', 'a', 2));
    const seen: number[] = [];
    const watched = replay.watch('s', (r) => seen.push(r.n));
    expect(watched.replay.map((r) => r.n)).toEqual([1, 2]);
    replay.add('s', notice('s', 'b', 1));
    expect(seen).toEqual([1]);
    expect(replay.watch('s', () => {}).replay.map((r) => `${r.run}${r.n}`)).toEqual(['b1']);
    watched.stop();
    replay.add('s', notice('s', 'b', 2));
    expect(seen).toEqual([1]);
  });

  it('has: a record of the current run kept already; add ignores it (the echo of a record this process kept)', () => {
    const replay = new ReplayBuffers();
    replay.add('s', notice('s', 'a', 1));
    replay.add('s', notice('s', 'a', 2));
    expect([replay.has('s', 'a', 2), replay.has('s', 'a', 1), replay.has('s', 'a', 3), replay.has('s', 'b', 1), replay.has('t', 'a', 1)]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect([replay.has(undefined, 'a', 1), replay.has('s', 'a', '1'), replay.has({}, 'a', 1)]).toEqual([false, false, false]);
    const seen: number[] = [];
    replay.watch('s', (r) => seen.push(r.n));
    replay.add('s', notice('s', 'a', 2));
    replay.add('s', notice('s', 'a', 3));
    expect(seen).toEqual([3]);
    expect(replay.watch('s', () => {}).replay.map((r) => r.n)).toEqual([1, 2, 3]);
  });

  it('bounds each session by records and bytes (oldest first) and the sessions kept (unwatched, least recently fed first)', () => {
    const replay = new ReplayBuffers({ maxEvents: 3, maxBytes: 400, maxSessions: 2 });
    for (let n = 1; n <= 5; n++) replay.add('s', notice('s', 'a', n));
    expect(replay.watch('s', () => {}).replay.map((r) => r.n)).toEqual([3, 4, 5]);
    const big = new ReplayBuffers({ maxEvents: 100, maxBytes: 400, maxSessions: 2 });
    for (let n = 1; n <= 4; n++) big.add('t', notice('t', 'a', n, 'y'.repeat(250)));
    expect(big.watch('t', () => {}).replay.map((r) => r.n)).toEqual([4]);

    const few = new ReplayBuffers({ maxEvents: 10, maxBytes: 10_000, maxSessions: 2 });
    const { stop } = few.watch('watched', () => {});
    few.add('watched', notice('watched', 'a', 1));
    few.add('one', notice('one', 'a', 1));
    few.add('two', notice('two', 'a', 1));
    expect(few.watch('one', () => {}).replay).toEqual([]); // dropped: least recently fed, unwatched
    expect(few.watch('watched', () => {}).replay).toHaveLength(1); // kept: watched
    stop();
  });

  it('bounds all sessions together in bytes: many watched sessions with large deltas stay under the budget, the least recently used give way', () => {
    const budget = 50_000;
    const replay = new ReplayBuffers({ maxTotalBytes: budget });
    const seen = new Map<string, number>();
    const ids = Array.from({ length: 40 }, (_, i) => `s${i}`);
    for (const id of ids) replay.watch(id, () => seen.set(id, (seen.get(id) ?? 0) + 1));
    let fed = 0;
    for (const id of ids) {
      for (let n = 1; n <= 20; n++) {
        replay.add(id, notice(id, 'a', n, 'y'.repeat(1_000)));
        fed += 1_000;
        expect(replay.bytes).toBeLessThanOrEqual(budget);
      }
    }
    expect(fed).toBeGreaterThan(10 * budget);
    // The most recently fed sessions keep their records; the first ones gave theirs up, but their watchers still hear.
    expect(replay.watch('s39', () => {}).replay).toHaveLength(20);
    expect(replay.watch('s0', () => {}).replay).toEqual([]);
    replay.add('s0', notice('s0', 'a', 21));
    expect(seen.get('s0')).toBe(21);
    // An echo of a record whose buffer went is still known: not kept, nor handed out twice.
    expect(replay.has('s1', 'a', 20)).toBe(true);

    // One session alone past the budget keeps its newest records within it.
    const small = new ReplayBuffers({ maxTotalBytes: 5_000 });
    for (let n = 1; n <= 20; n++) small.add('big', notice('big', 'a', n, 'z'.repeat(1_000)));
    expect(small.bytes).toBeLessThanOrEqual(5_000);
    expect(
      small
        .watch('big', () => {})
        .replay.map((r) => r.n)
        .at(-1),
    ).toBe(20);
  });

  it('missedRecords: all of a run the client was not in, the rest of the one it was in', () => {
    const records = [notice('s', 'a', 1), notice('s', 'a', 2), notice('s', 'a', 3)];
    expect(missedRecords(records, null)).toHaveLength(3);
    expect(missedRecords(records, { run: 'a', n: 2 }).map((r) => r.n)).toEqual([3]);
    expect(missedRecords(records, { run: 'old', n: 9 }).map((r) => r.n)).toEqual([1, 2, 3]);
  });
});
