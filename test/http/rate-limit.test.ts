/** RateLimiter: a token bucket per key on an injected clock (no waiting). */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/http/rate-limit.js';

describe('RateLimiter', () => {
  it('allows a burst of perMinute per key, then says when the next one is back; keys are independent', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ perMinute: 3, now: () => now });
    for (let i = 0; i < 3; i++) expect(limiter.take('a')).toEqual({ ok: true });
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 20 }); // one back every 60 / 3 s
    expect(limiter.take('b')).toEqual({ ok: true });
    now += 19_000;
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    now += 1_000;
    expect(limiter.take('a')).toEqual({ ok: true });
    expect(limiter.take('a')).toMatchObject({ ok: false });
    now += 10 * 60_000; // refills to the burst, never beyond
    for (let i = 0; i < 3; i++) expect(limiter.take('a')).toEqual({ ok: true });
    expect(limiter.take('a')).toMatchObject({ ok: false });
  });

  it('remembers at most maxKeys keys: refilled buckets go first, then the least recently used', () => {
    let now = 0;
    const limiter = new RateLimiter({ perMinute: 1, now: () => now, maxKeys: 2 });
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('b').ok).toBe(true);
    expect(limiter.take('c').ok).toBe(true); // 'a' (least recently used) is forgotten
    expect(limiter.take('b').ok).toBe(false);
    expect(limiter.take('c').ok).toBe(false);
    expect(limiter.take('a').ok).toBe(true);
    now += 60_000;
    expect(limiter.take('d').ok).toBe(true);
  });

  it('refuses a limit that is not a whole number ≥ 1', () => {
    for (const perMinute of [0, -1, 1.5, Number.NaN]) expect(() => new RateLimiter({ perMinute })).toThrow(RangeError);
  });
});
