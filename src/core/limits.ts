/**
 * Size limits, in one place: what a user event, a model's tool call, a package's prompt file
 * and a refusal message may hold. Anything a person, a model or a package wrote is data with
 * a bound: without one, a large input is stored many times over (journal, snapshot, archive)
 * and a refusal that quotes it grows the next prompt by as much.
 *
 * - User-side limits (`userTextChars`) are checked by `session.send()`: a refusal with code
 *   `limit_exceeded` that names the limit and its setting.
 * - Model-side limits (`artifactBodyChars`, `toolArgumentsChars`, `tagsPerSubmit`) are part
 *   of the tools' zod schemas (src/core/tools/schemas.ts): a call over them is refused by rule 2
 *   with a message naming the limit, so the model can retry smaller. They are the defaults
 *   below (the JSON Schema the model reads states them), the same for every runtime.
 * - `refusalMessageChars` bounds every refusal a model reads as a tool result.
 * - `promptFileBytes` bounds a worker's .md file when a package loads, `workersPerPackage` the
 *   workers of a package (the manager's prompt lists every one): both checked before parsing.
 * - `MAX_BURST_LIMIT` bounds `maxBurst` itself, the same everywhere it can be set.
 */
import * as z from 'zod';
import { LimitExceededError, UserError } from './errors.js';

export interface Limits {
  /** Characters of text in one user event (input, a reason, all answers together). */
  userTextChars: number;
  /** Characters of one artifact body (one tag of a submit), and of any text field of a tool call. */
  artifactBodyChars: number;
  /** Characters of one tool call's arguments, as JSON. */
  toolArgumentsChars: number;
  /** Tags in one submit. */
  tagsPerSubmit: number;
  /** Bytes of one worker prompt file (.md) of a skill package. */
  promptFileBytes: number;
  /** Characters of a refusal message a model gets as a tool result. */
  refusalMessageChars: number;
  /** Workers of one skill package (the manifest's list, and the .md files in its workers/ folder). */
  workersPerPackage: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  userTextChars: 200_000,
  artifactBodyChars: 200_000,
  toolArgumentsChars: 1_000_000,
  tagsPerSubmit: 32,
  promptFileBytes: 256 * 1024,
  refusalMessageChars: 2_000,
  workersPerPackage: 200,
});

/** Where each limit is set, for messages: the createRuntime option, and the env/CLI setting if any. */
export const LIMIT_SETTINGS: Readonly<Record<keyof Limits, string>> = Object.freeze({
  userTextChars: 'createRuntime({ limits: { userTextChars } }), env STEWARD_MAX_USER_TEXT',
  artifactBodyChars: 'the tool contract (fixed: limits.artifactBodyChars)',
  toolArgumentsChars: 'the tool contract (fixed: limits.toolArgumentsChars)',
  tagsPerSubmit: 'the tool contract (fixed: limits.tagsPerSubmit)',
  promptFileBytes: 'the skill package (fixed: limits.promptFileBytes)',
  refusalMessageChars: 'the runtime (fixed: limits.refusalMessageChars)',
  workersPerPackage: 'the skill package (fixed: limits.workersPerPackage)',
});

const positive = z.number().int().positive();
const LimitsSchema = z.strictObject({
  userTextChars: positive.optional(),
  artifactBodyChars: positive.optional(),
  toolArgumentsChars: positive.optional(),
  tagsPerSubmit: positive.optional(),
  promptFileBytes: positive.optional(),
  refusalMessageChars: positive.optional(),
  workersPerPackage: positive.optional(),
});

/** The defaults with `overrides` applied; a wrong value is a UserError naming it. */
export function resolveLimits(overrides: unknown, where = 'createRuntime'): Limits {
  if (overrides === undefined) return { ...DEFAULT_LIMITS };
  const parsed = LimitsSchema.safeParse(overrides);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'limits'}: ${i.message}`).join('; ');
    throw new UserError(`${where}: invalid limits (${problems}). Each limit is a whole number ≥ 1; the names are ${Object.keys(DEFAULT_LIMITS).join(', ')}.`);
  }
  const defined = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  return { ...DEFAULT_LIMITS, ...defined };
}

/** The limits set by the environment (STEWARD_MAX_USER_TEXT); a bad value names the variable. */
export function limitsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<Limits> {
  const raw = env.STEWARD_MAX_USER_TEXT?.trim();
  if (!raw) return {};
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UserError(`STEWARD_MAX_USER_TEXT must be a whole number of characters ≥ 1, got ${quotedSetting(raw)}.`);
  return { userTextChars: n };
}

/** How much of a text was left out, as a clipped text says it. */
const leftOut = (rest: number) => `${rest} more character${rest === 1 ? '' : 's'} left out`;

/** `text` cut to at most about `max` characters, saying how much was left out. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${leftOut(text.length - max)})`;
}

/** A setting's value as an error quotes it: as given, clipped after 40 characters (an environment variable or an option may hold anything). */
export function quotedSetting(value: string): string {
  return value.length <= 40 ? `"${value}"` : `"${value.slice(0, 40)}…" (${leftOut(value.length - 40)})`;
}

/** A zod string with a length limit whose message names the limit (for tool schemas). */
export function boundedString(max: number, limit: keyof Limits): z.ZodString {
  return z.string().max(max, `longer than ${max} characters (the ${limit} limit): send less`);
}

/** The message for a value over a limit: what, how big, the limit and where it is set. */
export function overLimitMessage(what: string, actual: number, limit: keyof Limits, max: number, unit = 'characters'): string {
  return `${what} has ${actual} ${unit}; the limit is ${max} (${limit}, set with ${LIMIT_SETTINGS[limit]}).`;
}

/**
 * The characters of text in a user event as `userTextChars` counts them: every string field
 * and every answer, but for `type` and the fields the event schema bounds itself (`by`,
 * `via`, `through`, `at`, `groups`).
 *
 * @example
 * userTextChars({ type: 'user_submitted_input', text: 'Hello', by: 'ana' }); // 5
 */
export function userTextChars(event: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const key of Object.keys(event)) {
    if (key === 'type' || key === 'by' || key === 'via' || key === 'through' || key === 'at' || key === 'groups') continue;
    const value = event[key];
    if (typeof value === 'string') size += value.length;
    else if (value && typeof value === 'object') for (const v of Object.values(value as Record<string, unknown>)) if (typeof v === 'string') size += v.length;
  }
  return size;
}

/**
 * The most model rounds a burst may allow (`maxBurst`). A burst runs with nobody watching:
 * a thousand rounds are already far past any plan, and a value like 20,000 only turns a
 * looping model into a long bill. Fixed; checked by createRuntime/createSession, the CLI's
 * `--max-burst` and serve's `POST /sessions`, all with MAX_BURST_ADVICE.
 */
export const MAX_BURST_LIMIT = 1_000;

/** What a maxBurst over the limit is told, in the library, the CLI and serve alike. */
export const MAX_BURST_ADVICE =
  `the limit is ${MAX_BURST_LIMIT} rounds (MAX_BURST_LIMIT): a burst runs without the user, so a ` +
  `longer one only lets a looping model run on. Use at most ${MAX_BURST_LIMIT}; the user's next action ` +
  `starts a new burst.`;

/** maxBurst in a request body (serve): a whole number from 1 to MAX_BURST_LIMIT. */
export const MaxBurstSchema = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_BURST_LIMIT, `is more than ${MAX_BURST_LIMIT}; ${MAX_BURST_ADVICE}`);

/**
 * `value` if it is a valid maxBurst. Not a whole number ≥ 1: a UserError; over
 * MAX_BURST_LIMIT: a LimitExceededError (limit `maxBurst`). `where` starts the message.
 */
export function checkMaxBurst(value: number, where: string): number {
  if (!Number.isInteger(value) || value < 1) throw new UserError(`${where}: maxBurst must be a whole number ≥ 1 (got ${String(value)}).`);
  if (value > MAX_BURST_LIMIT) throw new LimitExceededError(`${where}: maxBurst is ${value}; ${MAX_BURST_ADVICE}`, 'maxBurst', MAX_BURST_LIMIT, value);
  return value;
}
