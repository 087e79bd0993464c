/**
 * Who follows a session (src/serve/followers.ts): a model call streams only while someone
 * does. Followers on a fake clock, and two servers' LiveEvents on one in-process bus that
 * delivers every event to every listener, as PostgreSQL NOTIFY does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FOLLOW_MS, Followers } from '../../src/serve/followers.js';
import { LiveEvents } from '../../src/serve/live-events.js';
import type { EventBus } from '../../src/store/session-store.js';
import type { LiveRecord } from '../../src/serve/live-replay.js';

describe('Followers', () => {
  it('follows a session while a stream is open, and for FOLLOW_MS after the last one closed', () => {
    let now = 0;
    const followers = new Followers(() => now);
    expect(followers.isFollowed('s1')).toBe(false);
    const closeA = followers.opened('s1');
    const closeB = followers.opened('s1');
    closeA();
    closeA(); // twice: counted once
    now = FOLLOW_MS * 10;
    expect(followers.isFollowed('s1')).toBe(true); // B is still open
    expect(followers.followedHere()).toEqual(['s1']);
    closeB();
    expect(followers.followedHere()).toEqual([]);
    now += FOLLOW_MS - 1;
    expect(followers.isFollowed('s1')).toBe(true);
    now += 1;
    expect(followers.isFollowed('s1')).toBe(false);
    expect(followers.isFollowed('s2')).toBe(false);
  });

  it('followFor lasts FOLLOW_MS from its last renewal', () => {
    let now = 0;
    const followers = new Followers(() => now);
    followers.followFor('s1');
    now = FOLLOW_MS / 2;
    followers.followFor('s1');
    now = FOLLOW_MS + 1;
    expect(followers.isFollowed('s1')).toBe(true);
    now = FOLLOW_MS * 1.5;
    expect(followers.isFollowed('s1')).toBe(false);
  });

  it('remembers at most 10,000 follows: the least recently renewed go first', () => {
    const followers = new Followers(() => 0);
    for (let i = 0; i < 10_005; i++) followers.followFor(`s${i}`);
    expect(followers.isFollowed('s0')).toBe(false);
    expect(followers.isFollowed('s4')).toBe(false);
    expect(followers.isFollowed('s5')).toBe(true);
    expect(followers.isFollowed('s10004')).toBe(true);
  });
});

/** Every event published by anyone, to every listener (after a microtask, as a bus delivers). */
function sharedBus(): { bus: () => EventBus; raw: (event: unknown) => void; sent: unknown[] } {
  const listeners = new Set<(event: unknown) => void>();
  const deliver = (event: unknown) => queueMicrotask(() => listeners.forEach((l) => l(event)));
  const sent: unknown[] = [];
  return {
    raw: deliver,
    sent,
    bus: () => ({
      publishEvents: (_sessionId, events) => {
        sent.push(...events);
        events.forEach(deliver);
      },
      watchEvents: async (_sessionId, listener) => {
        listeners.add(listener);
        return async () => void listeners.delete(listener);
      },
      flush: async () => {},
    }),
  };
}

describe('LiveEvents: follows across servers', () => {
  afterEach(() => vi.useRealTimers());

  it('a stream open on one server makes the session followed on the other; without a bus, only here', async () => {
    const shared = sharedBus();
    const [a, b] = [new LiveEvents(shared.bus(), () => {}), new LiveEvents(shared.bus(), () => {})];
    await a.hear();
    expect(a.isFollowed('s1')).toBe(false);
    const watched = await b.watch('s1', () => {});
    await expect.poll(() => a.isFollowed('s1')).toBe(true);
    expect(b.isFollowed('s1')).toBe(true);
    expect(a.isFollowed('s2')).toBe(false);
    watched.stop();
    await Promise.all([a.close(), b.close()]);

    const alone = new LiveEvents(undefined, () => {});
    const stream = await alone.watch('s3', () => {});
    expect(alone.isFollowed('s3')).toBe(true);
    stream.stop();
    await alone.close();
  });

  it('renews the follow on the bus every half follow while the stream stays open, and lets it lapse once closed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    const shared = sharedBus();
    const [a, b] = [new LiveEvents(shared.bus(), () => {}), new LiveEvents(shared.bus(), () => {})];
    await a.hear();
    const watched = await b.watch('s1', () => {});
    await vi.advanceTimersByTimeAsync(0);
    expect(a.isFollowed('s1')).toBe(true);
    await vi.advanceTimersByTimeAsync(FOLLOW_MS * 3);
    expect(a.isFollowed('s1')).toBe(true);
    watched.stop();
    await vi.advanceTimersByTimeAsync(FOLLOW_MS * 2);
    expect(a.isFollowed('s1')).toBe(false);
    expect(b.isFollowed('s1')).toBe(false);
    await Promise.all([a.close(), b.close()]);
  });

  it('a watcher that asks not to follow (it reads no deltas) makes the session followed nowhere', async () => {
    const shared = sharedBus();
    const [a, b] = [new LiveEvents(shared.bus(), () => {}), new LiveEvents(shared.bus(), () => {})];
    await a.hear();
    const watched = await b.watch('s1', () => {}, { follow: false });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(a.isFollowed('s1')).toBe(false);
    expect(b.isFollowed('s1')).toBe(false);
    watched.stop();
    expect(b.isFollowed('s1')).toBe(false);
    await Promise.all([a.close(), b.close()]);
  });

  it('ignores notices that are not a follow of a valid session id, and a send answered at once counts as followed', async () => {
    const shared = sharedBus();
    const a = new LiveEvents(shared.bus(), () => {});
    await a.hear();
    shared.raw({ followed: '' });
    shared.raw({ followed: 'bad\u0000id' });
    shared.raw({ followed: 's1', extra: true });
    shared.raw({ followed: 42 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(a.isFollowed('s1')).toBe(false);
    expect(a.isFollowed('')).toBe(false);
    a.expectFollower('s2');
    expect(a.isFollowed('s2')).toBe(true);
    await a.close();
  });

  it("a session's records go on the bus only while a server watches it, the run so far first, in order", async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    const shared = sharedBus();
    const [a, b] = [new LiveEvents(shared.bus(), () => {}), new LiveEvents(shared.bus(), () => {})];
    await a.hear();
    const records = () => shared.sent.filter((e): e is LiveRecord => (e as { run?: unknown }).run !== undefined).map((r) => r.n);
    for (const n of [1, 2, 3]) a.publish('s1', entered(n));
    a.publish('s2', entered(1, 's2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(records()).toEqual([]);

    // B starts to follow s1: A sends the three it kept, then each new one; s2, watched nowhere, stays here.
    const seen: number[] = [];
    const watched = await b.watch('s1', (record) => seen.push(record.n));
    await vi.advanceTimersByTimeAsync(0);
    a.publish('s1', entered(4));
    a.publish('s2', entered(2, 's2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(records()).toEqual([1, 2, 3, 4]);

    // Renewed while the stream stays open; once it closed and the follow lapsed, off the bus again.
    await vi.advanceTimersByTimeAsync(FOLLOW_MS * 3);
    a.publish('s1', entered(5));
    watched.stop();
    await vi.advanceTimersByTimeAsync(FOLLOW_MS * 2);
    a.publish('s1', entered(6));
    await vi.advanceTimersByTimeAsync(0);
    expect(records()).toEqual([1, 2, 3, 4, 5]);
    await Promise.all([a.close(), b.close()]);
  });

  it('a watcher that reads no deltas gets the records too, without making the session followed', async () => {
    const shared = sharedBus();
    const [a, b] = [new LiveEvents(shared.bus(), () => {}), new LiveEvents(shared.bus(), () => {})];
    await a.hear();
    a.publish('s1', entered(1));
    const seen: number[] = [];
    const watched = await b.watch('s1', (record) => seen.push(record.n), { follow: false });
    await expect.poll(() => seen).toEqual([1]);
    a.publish('s1', entered(2));
    await expect.poll(() => seen).toEqual([1, 2]);
    expect(a.isFollowed('s1')).toBe(false);
    expect(shared.sent).toContainEqual({ watched: 's1' });
    expect(shared.sent).not.toContainEqual({ followed: 's1' });
    watched.stop();
    watched.stop();
    await Promise.all([a.close(), b.close()]);
  });
});

/** Record `n` of run `r1` of a session: it entered a state. */
function entered(n: number, sessionId = 's1'): LiveRecord {
  return { run: 'r1', n, event: { type: 'state_entered', sessionId, at: n, state: 'running.manager.thinking' } };
}
