/**
 * A session's deadline as the stores keep it (one row's `due_at`, `due_wait`, `due_level`):
 * which wait, which rule of its chain, and when it passes. The chart keeps the rule
 * (src/core/machines/deadlines.ts) and never reads a clock; the runtime that holds the session
 * turns it into this due time and writes it with the journal entry and snapshot that opened or
 * moved the wait, so that a restart or another server finds the same time (`dueDeadlines`).
 *
 * zod and nothing of Node: MemoryStore, which uses it, also runs in browsers.
 */
import * as z from 'zod';
import { SnapshotError, UserError } from '../core/errors.js';

/** The most due deadlines one `dueDeadlines` call returns. */
export const DUE_DEADLINES_MAX_LIMIT = 1000;

/** What an integer column holds on every store (PostgreSQL `integer`). */
const MAX_INT = 2 ** 31 - 1;

/**
 * An instant exactly as `Date.prototype.toISOString` writes it (UTC, milliseconds, years
 * 1000–9999): SQLite compares due times as text, so one spelling per instant keeps the
 * order of the text the order of time.
 */
const INSTANT = /^[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isInstant = (text: string) => INSTANT.test(text) && !Number.isNaN(Date.parse(text)) && new Date(text).toISOString() === text;

/** An ISO-8601 UTC instant as `new Date().toISOString()` writes it. */
const InstantSchema = z.string().refine(isInstant, 'must be an ISO-8601 UTC time as `new Date().toISOString()` writes it, e.g. "2031-05-06T07:08:09.123Z"');

export const StoredDeadlineSchema = z.object({
  /** The wait it belongs to (the chart's number for the open wait). */
  wait: z.number().int().min(0).max(MAX_INT),
  /** The rule of the wait's deadline chain that is current (0: the first). */
  level: z.number().int().min(0).max(MAX_INT),
  /** When the rule's interval passes: ISO-8601 UTC, as `new Date().toISOString()` writes it. */
  dueAt: InstantSchema,
});

/** A session's next deadline: the wait, the current rule of its chain, and when it passes. */
export type StoredDeadline = z.infer<typeof StoredDeadlineSchema>;

/** A session whose deadline has passed, as `SessionStore.dueDeadlines` finds it. */
export interface DueDeadline {
  sessionId: string;
  deadline: StoredDeadline;
}

/**
 * The deadline of a create or an append, checked (a copy): undefined (leave it as stored)
 * and null (none) pass as they are; anything else must be a StoredDeadline (UserError).
 */
export function deadlineInput(value: StoredDeadline | null | undefined, sessionId: string): StoredDeadline | null | undefined {
  if (value === undefined || value === null) return value;
  const parsed = StoredDeadlineSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UserError(
    `The deadline written with session "${sessionId}" is not one a store keeps: ${firstIssue(parsed.error)}. ` +
      'Give { wait, level, dueAt } with whole numbers and an ISO-8601 UTC dueAt, null to clear it, or leave it out to keep the stored one.',
  );
}

/** The arguments of a `dueDeadlines` call, checked: a wrong `now` or limit is a UserError. */
export function dueRequest(now: string, limit: number): { now: string; limit: number } {
  if (!Number.isInteger(limit) || limit < 1 || limit > DUE_DEADLINES_MAX_LIMIT) {
    throw new UserError(
      `dueDeadlines: limit must be a whole number from 1 to ${DUE_DEADLINES_MAX_LIMIT} (got ${String(limit)}); to find more, fire these and ask again.`,
    );
  }
  if (typeof now !== 'string' || !isInstant(now)) {
    throw new UserError(
      `dueDeadlines: now must be an ISO-8601 UTC time as \`new Date().toISOString()\` writes it (got ${JSON.stringify(String(now)).slice(0, 60)}).`,
    );
  }
  return { now, limit };
}

/**
 * A row's deadline (its three columns), checked as every persisted row is: null when the row
 * has none (due_at null; a file or schema from before deadlines reads as none).
 */
export function deadlineOfRow(
  sessionId: string,
  dueAt: string | null | undefined,
  wait: number | null | undefined,
  level: number | null | undefined,
): StoredDeadline | null {
  if (dueAt === null || dueAt === undefined) return null;
  const parsed = StoredDeadlineSchema.safeParse({ wait, level, dueAt });
  if (parsed.success) return parsed.data;
  throw new SnapshotError(
    `The stored deadline of session "${sessionId}" is corrupt (${firstIssue(parsed.error)}). ` +
      'The row cannot be used as it is: clear its due_at (the session then waits without a deadline) or restore it from a backup.',
  );
}

/** The first problem zod found, named by its field ("dueAt must be …"). */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'the value'} ${issue.message}`;
}
