/**
 * How `steward serve` fails: one JSON shape, `{ error: { code, message, issues? } }`
 * (ErrorBody in schemas.ts), a status that matches the code, and a message that names the fix.
 */
import type { z } from 'zod';
import { StewardError, StoreError } from '../errors.js';

export interface Issue {
  path: string;
  message: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503,
    readonly code: string,
    message: string,
    readonly issues?: Issue[],
  ) {
    super(message);
  }

  body(): { error: { code: string; message: string; issues?: Issue[] } } {
    return { error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) } };
  }
}

/** Status codes of the runtime's error codes (SendResult.error.code and StewardError.code). */
const statusOfCode: Record<string, HttpError['status']> = {
  invalid_event: 400,
  user_error: 400,
  invalid_session_id: 400,
  invalid_cursor: 400,
  event_refused: 409,
  conflict: 409,
  lease_lost: 409,
  session_not_found: 404,
  session_stopped: 503,
  store_unavailable: 503,
  store_locked: 503,
  internal_error: 500,
};

/**
 * What a remote client is told of a StoreError: its message names the database file, which
 * is the operator's business (the server's log has it), not the client's.
 */
const storeFaultForClients: Record<string, string> = {
  store_locked: 'The store is locked by another process (another Steward process writing, or a program holding it open): retry in a moment.',
};

/**
 * The message of `code` as a remote client sees it. `fromStoreError`: it comes from a
 * StoreError (which always names the file); a store_unavailable from elsewhere names only a
 * PostgreSQL target without its password, and is kept.
 */
export function clientMessage(code: string, message: string, fromStoreError = false): string {
  if (!code.startsWith('store_') || (code === 'store_unavailable' && !fromStoreError)) return message;
  return storeFaultForClients[code] ?? `The store failed (${code}): the server's log has the details.`;
}

export function statusOf(code: string): HttpError['status'] {
  return statusOfCode[code] ?? 500;
}

/** A failed SendResult as a remote client may see it: a store fault's file goes to `log` only. */
export function clientResult<R extends { ok: boolean; error?: { code: string; message: string } }>(result: R, log: (message: string) => void): R {
  if (result.ok || !result.error) return result;
  const message = clientMessage(result.error.code, result.error.message);
  if (message === result.error.message) return result;
  log(`serve: a send failed: ${result.error.message}`);
  return { ...result, error: { ...result.error, message } };
}

/** A Steward error as an HttpError; anything else is an internal error whose details stay in the log. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StoreError) return new HttpError(statusOf(error.code), error.code, clientMessage(error.code, error.message, true));
  if (StewardError.isStewardError(error)) return new HttpError(statusOf(error.code), error.code, error.message);
  return new HttpError(500, 'internal_error', 'The server failed on this request; its log has the details.');
}

/** Parses `value` with `schema`, or throws a 400 that lists every problem with its path. */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  throw new HttpError(400, 'invalid_request', `Invalid ${what}: ${summary}.`, issues);
}
