/** Small numeric helpers of the load benchmark. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The p-th percentile of ascending `sorted` (nearest rank); 0 for none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** A small seeded generator (mulberry32): the same seed draws the same run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Where this process's `performance.now()` sits on the machine's monotonic clock (ms), which
 * every process shares: add it to compare times taken in several processes. (Two processes'
 * `performance.timeOrigin`, taken from the wall clock as each starts, can differ by over a
 * millisecond from where their clocks really start.)
 */
export const monotonicOffsetMs = sampleMonotonicOffset();

/**
 * Reads `performance.now()` on both sides of one `hrtime` read, several times, and keeps the
 * tightest bracket: a process descheduled between two reads would otherwise shift every time
 * it reports by as long as it was away.
 */
function sampleMonotonicOffset(): number {
  let best = { width: Infinity, offset: 0 };
  for (let i = 0; i < 50; i++) {
    const before = performance.now();
    const monotonic = Number(process.hrtime.bigint()) / 1e6;
    const after = performance.now();
    if (after - before < best.width) best = { width: after - before, offset: monotonic - (before + after) / 2 };
  }
  return best.offset;
}

/** The marker a load session's request carries into every prompt (`[load-N]`): which session a model call or an action is for. */
export const MARKER = /\[load-(\d+)\]/;

/** What user `marker` asks for first: the marker goes with it into every prompt of the session. */
export function requestFor(marker: number | string): string {
  return `[load-${marker}] Write a short note about topic ${marker}.`;
}

/** The marker number in a user event's text, if it has one (a session's first input carries it). */
export function markerIn(event: unknown): string | undefined {
  const text = (event as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? MARKER.exec(text)?.[1] : undefined;
}
