/**
 * A per-caller rate limit (a token bucket per key): each caller may spend `perMinute`
 * actions at once, and gets them back evenly over a minute. One instance per app, its
 * clock injectable; nothing is shared between instances.
 *
 * The number of keys is bounded (`maxKeys`): past it, the buckets that have refilled (the
 * same as no bucket) go first, then the oldest, so a flood of new keys costs bounded memory.
 */

export interface RateLimitOptions {
  /** Actions per minute per key (also the burst); a whole number ≥ 1. */
  perMinute: number;
  /** Milliseconds; default Date.now. */
  now?: () => number;
  /** Keys remembered at most (default 10,000). */
  maxKeys?: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly perMinute: number;
  private readonly now: () => number;
  private readonly maxKeys: number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions) {
    if (!Number.isInteger(options.perMinute) || options.perMinute < 1)
      throw new RangeError(`perMinute must be a whole number ≥ 1 (got ${String(options.perMinute)})`);
    this.perMinute = options.perMinute;
    this.now = options.now ?? Date.now;
    this.maxKeys = options.maxKeys ?? 10_000;
  }

  /** What `take(key)` would answer now, spending nothing: to refuse early what would be refused later. */
  peek(key: string): RateDecision {
    const bucket = this.buckets.get(key);
    if (!bucket) return { ok: true };
    const perMs = this.perMinute / 60_000;
    const tokens = Math.min(this.perMinute, bucket.tokens + Math.max(0, this.now() - bucket.at) * perMs);
    return tokens >= 1 ? { ok: true } : { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
  }

  /** Spends one action of `key`, or says how many whole seconds until one is back. */
  take(key: string): RateDecision {
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + Math.max(0, now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(key, bucket);
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
    }
    bucket.tokens -= 1;
    this.buckets.delete(key); // re-inserted last: the Map's order is least recently used first
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) this.prune(now, perMs);
    return { ok: true };
  }

  private prune(now: number, perMs: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * perMs >= this.perMinute) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}
