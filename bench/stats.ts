/**
 * Samples of one session and the figures derived from them, plus medians and quantiles.
 * All times are performance.now() milliseconds.
 */
import { BURSTS, CALLS_PER_BURST, CALLS_PER_SESSION, K } from './scenario.js';

export interface SessionSamples {
  /** Entry time of every model call (19). */
  stamps: number[];
  /** When the caller saw the session wait, after each burst (3). */
  waitSeen: number[];
  /** When the caller started resuming (before any drop/restore, then sending the answer) (3). */
  resumeStart: number[];
}

/** Collected over the recorded sessions of one mode. */
export class ModeSamples {
  readonly rounds: number[] = [];
  readonly roundsByBurst: number[][] = Array.from({ length: BURSTS }, () => []);
  readonly pause: number[] = [];
  readonly resume: number[] = [];
  readonly pauseResume: number[] = [];
  /** First call of a burst → the caller sees the wait: K rounds, the boundary, and any persist backlog. */
  readonly burst: number[] = [];
  readonly session: number[] = [];
  sessions = 0;

  add(s: SessionSamples): void {
    if (s.stamps.length !== CALLS_PER_SESSION || s.waitSeen.length !== BURSTS || s.resumeStart.length !== BURSTS) {
      throw new Error(`bad samples: ${s.stamps.length} stamps, ${s.waitSeen.length} waits, ${s.resumeStart.length} resumes`);
    }
    for (let b = 0; b < BURSTS; b++) {
      // K intervals per burst: each read call → the next call (read or boundary).
      for (let p = 0; p < K; p++) {
        const i = b * CALLS_PER_BURST + p;
        const dt = s.stamps[i + 1]! - s.stamps[i]!;
        this.rounds.push(dt);
        this.roundsByBurst[b]!.push(dt);
      }
      const boundary = s.stamps[b * CALLS_PER_BURST + K]!;
      const next = s.stamps[(b + 1) * CALLS_PER_BURST]!;
      const pause = s.waitSeen[b]! - boundary;
      const resume = next - s.resumeStart[b]!;
      this.pause.push(pause);
      this.resume.push(resume);
      this.pauseResume.push(pause + resume);
      this.burst.push(s.waitSeen[b]! - s.stamps[b * CALLS_PER_BURST]!);
    }
    this.session.push(s.stamps[CALLS_PER_SESSION - 1]! - s.stamps[0]!);
    this.sessions++;
  }
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export const median = (values: readonly number[]) => quantile(values, 0.5);

export interface Summary {
  median: number;
  p10: number;
  p90: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  return { median: median(values), p10: quantile(values, 0.1), p90: quantile(values, 0.9), n: values.length };
}

/** Times a synchronous `fn` `n` times (after `warm` untimed calls); returns the durations. */
export function timeEachSync(n: number, warm: number, fn: (i: number) => unknown): number[] {
  for (let i = 0; i < warm; i++) fn(i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn(warm + i);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Times an async `fn` `n` times (after `warm` untimed calls); returns the per-call durations. */
export async function timeEach(n: number, warm: number, fn: (i: number) => unknown): Promise<number[]> {
  for (let i = 0; i < warm; i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(warm + i);
    out.push(performance.now() - t0);
  }
  return out;
}
