/**
 * The per-caller and per-server limits of a serve app, from its options (`startServe`,
 * `createServeApp`; the CLI's flags pass through them), checked with zod and turned into the
 * objects that enforce them: the create limit (create-limit.ts), the open streams per caller
 * (src/http/stream-slots.ts) and the replay budget (live-replay.ts).
 */
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { RateLimiter } from '../http/rate-limit.js';
import { StreamSlots } from '../http/stream-slots.js';
import { DEFAULT_MAX_CREATES_PER_MINUTE, DEFAULT_MAX_REPLAY_MB, DEFAULT_MAX_STREAMS_PER_CALLER } from './defaults.js';
import type { ReplayLimits } from './live-replay.js';

const orNoLimit = 'must be a whole number ≥ 0 (0: no limit)';
const ServeLimitsSchema = z.object({
  maxCreatesPerMinute: z.number(orNoLimit).int(orNoLimit).min(0, orNoLimit).optional(),
  maxStreamsPerCaller: z.number(orNoLimit).int(orNoLimit).min(0, orNoLimit).optional(),
  maxReplayBytes: z
    .number('must be a whole number of bytes ≥ 1')
    .int('must be a whole number of bytes ≥ 1')
    .min(1, 'must be a whole number of bytes ≥ 1')
    .optional(),
});

/** The limits an app is started with. */
export type ServeLimitOptions = z.input<typeof ServeLimitsSchema>;

/**
 * The enforcers of `options`' limits, defaults filled in; a bad value is a UserError naming
 * the option (`where` its caller, e.g. "startServe") and what it must be.
 *
 * @example
 * const { createLimit, streamSlots, replay } = serveLimits({ maxStreamsPerCaller: 10 }, 'startServe');
 */
export function serveLimits(
  options: ServeLimitOptions,
  where: string,
): { createLimit: RateLimiter | null; streamSlots: StreamSlots | null; replay: Partial<ReplayLimits> } {
  const parsed = ServeLimitsSchema.safeParse({
    maxCreatesPerMinute: options.maxCreatesPerMinute,
    maxStreamsPerCaller: options.maxStreamsPerCaller,
    maxReplayBytes: options.maxReplayBytes,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new UserError(`${where}: ${name} ${issue.message}, got ${String((options as Record<string, unknown>)[name])}.`);
  }
  const perMinute = parsed.data.maxCreatesPerMinute ?? DEFAULT_MAX_CREATES_PER_MINUTE;
  const streams = parsed.data.maxStreamsPerCaller ?? DEFAULT_MAX_STREAMS_PER_CALLER;
  return {
    createLimit: perMinute > 0 ? new RateLimiter({ perMinute }) : null,
    streamSlots: streams > 0 ? new StreamSlots(streams) : null,
    replay: { maxTotalBytes: parsed.data.maxReplayBytes ?? DEFAULT_MAX_REPLAY_MB * 1_000_000 },
  };
}
