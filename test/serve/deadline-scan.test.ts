/**
 * The scan of due deadlines on its own (a target of the test's): it fires each due deadline
 * through the target, one scan at a time; a deadline that did not fire (its session would not
 * load here, its lease is elsewhere) is tried again a minute later and meanwhile takes no
 * other deadline's place; nothing is fired while the server drains.
 */
import { describe, expect, it } from 'vitest';
import { DeadlineScan, type DeadlineTarget } from '../../src/serve/deadline-scan.js';
import type { StoredDeadline } from '../../src/store/session-store.js';

const deadline: StoredDeadline = { wait: 2, level: 0, dueAt: '2026-12-06T09:00:00.000Z' };

function target(ids: string[], fires: (id: string) => boolean | Error) {
  let now = Date.parse('2026-12-06T10:00:00Z');
  const asked: number[] = [];
  const fired: string[] = [];
  const logged: string[] = [];
  let draining = false;
  const t: DeadlineTarget = {
    now: () => now,
    async dueDeadlines(_now, limit) {
      asked.push(limit);
      return ids.slice(0, limit).map((sessionId) => ({ sessionId, deadline }));
    },
    async fire(id) {
      fired.push(id);
      const answer = fires(id);
      if (answer instanceof Error) throw answer;
      return answer;
    },
    draining: () => draining,
    log: (m) => logged.push(m),
  };
  return { t, asked, fired, logged, advance: (ms: number) => (now += ms), drain: () => (draining = true) };
}

describe('the scan of due deadlines', () => {
  it('backs off a deadline that did not fire, without it taking another one’s place, and tries it again a minute later', async () => {
    const ids = ['broken', 'elsewhere', ...Array.from({ length: 30 }, (_, i) => `s${i}`)];
    const fired = new Set<string>();
    const x = target(ids, (id) => (id === 'broken' ? new Error('snapshot is not a session') : id === 'elsewhere' ? false : !fired.has(id) && !!fired.add(id)));
    const scan = new DeadlineScan(x.t);

    expect(await scan.scan(5)).toEqual(['s0', 's1', 's2']);
    expect(x.logged).toEqual([expect.stringContaining('session broken did not fire (will retry): snapshot is not a session')]);
    // The next scan asks for two more (the two waiting to be tried again) and skips them: five others get their turn.
    x.fired.length = 0;
    ids.splice(2, 3); // the fired ones are no longer due
    expect(await scan.scan(5)).toEqual(['s3', 's4', 's5', 's6', 's7']);
    expect(x.asked.at(-1)).toBe(7);
    expect(x.fired).not.toContain('broken');
    expect(x.fired).not.toContain('elsewhere');

    x.advance(61_000);
    x.fired.length = 0;
    await scan.scan(5);
    expect(x.fired.slice(0, 2)).toEqual(['broken', 'elsewhere']);
  });

  it('fires nothing while the server drains, and one scan at a time', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const x = target(['a'], () => true);
    const slow: DeadlineTarget = { ...x.t, dueDeadlines: async (now, limit) => (await gate, x.t.dueDeadlines(now, limit)) };
    const scan = new DeadlineScan(slow);
    const [first, second] = [scan.scan(), scan.scan()];
    release();
    expect(await first).toEqual(['a']);
    expect(await second).toEqual(['a']);
    expect(x.fired).toEqual(['a']);
    x.drain();
    expect(await scan.scan()).toEqual([]);
    expect(x.fired).toEqual(['a']);
  });
});
