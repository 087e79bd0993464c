/**
 * How Steward's HTTP servers (`steward serve` and the inspector) fail: one JSON shape,
 * `{ error: { code, message, issues? } }` (ErrorBody in src/serve/schemas.ts, the documented
 * one), a status that matches the code, and a message that names the fix. What a client is
 * told never names a database file; the server's log gets the whole error.
 */
import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { z } from 'zod';
import { StewardError, StoreError } from '../errors.js';
import { safeLine, safeText } from '../text/safe-text.js';

export interface Issue {
  path: string;
  message: string;
}

export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

export interface ErrorBodyShape {
  error: { code: string; message: string; issues?: Issue[] };
}

export class HttpError extends Error {
  constructor(
    readonly status: HttpStatus,
    readonly code: string,
    message: string,
    readonly issues?: Issue[],
  ) {
    super(message);
  }

  body(): ErrorBodyShape {
    return { error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) } };
  }
}

/** Status codes of the runtime's error codes (SendResult.error.code and StewardError.code). */
const statusOfCode: Record<string, HttpStatus> = {
  invalid_event: 400,
  user_error: 400,
  invalid_package: 400,
  invalid_session_id: 400,
  invalid_cursor: 400,
  limit_exceeded: 400,
  event_refused: 409,
  wait_closed: 409,
  conflict: 409,
  lease_lost: 409,
  session_running_elsewhere: 409,
  idempotency_key_reused: 422,
  session_not_found: 404,
  session_stopped: 503,
  store_unavailable: 503,
  store_locked: 503,
  internal_error: 500,
};

/**
 * Seconds a client should wait before it sends again, by code (the Retry-After header). A
 * session running elsewhere runs a model call, which takes seconds: a client polling faster
 * only loads the servers that are taking a dead server's sessions over (bench:load: its users'
 * retries every 100 ms slowed those takeovers). A client that follows the session's stream
 * learns the moment it waits again.
 */
const retryAfterOfCode: Record<string, number> = {
  server_busy: 1,
  session_running_elsewhere: 1,
  lease_lost: 1,
  server_stopping: 1,
  store_locked: 1,
};

/** The Retry-After (seconds) of an answer with `code`, when one tells a client to come back. */
export function retryAfterOf(code: string): number | undefined {
  return retryAfterOfCode[code];
}

/** Sets the answer's Retry-After when `code` tells a client to come back. */
export function setRetryAfter(c: Context, code: string): void {
  const retryAfter = retryAfterOf(code);
  if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
}

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

export function statusOf(code: string): HttpStatus {
  return statusOfCode[code] ?? 500;
}

/** A failed SendResult as a remote client may see it: a store fault's file goes to `log` only. */
export function clientResult<R extends { ok: boolean; error?: { code: string; message: string } }>(result: R, log: (message: string) => void): R {
  if (result.ok || !result.error) return result;
  const message = clientMessage(result.error.code, result.error.message);
  if (message === result.error.message) return result;
  log(`a send failed: ${result.error.message}`);
  return { ...result, error: { ...result.error, message } };
}

/** A Steward error as an HttpError; anything else is an internal error whose details stay in the log. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StoreError) return new HttpError(statusOf(error.code), error.code, clientMessage(error.code, error.message, true));
  if (StewardError.isStewardError(error)) return new HttpError(statusOf(error.code), error.code, error.message);
  return new HttpError(500, 'internal_error', 'The server failed on this request; its log has the details.');
}

/** Whether the log should get the whole of `error`: an internal failure, or a store fault whose file the client is not told. */
export function worthLogging(error: unknown, http: HttpError): boolean {
  return http.status === 500 || error instanceof StoreError;
}

/** `error` for a log line: its stack when it has one, inert text either way. */
export function describeForLog(error: unknown): string {
  return safeText(error instanceof Error ? (error.stack ?? error.message) : String(error));
}

/**
 * The app's `onError`: every failure answers the one JSON shape; an HTTPException (hono's
 * bearer-auth refusals, which carry that shape already) answers as it is. `log` lines start
 * with `prefix` ("serve", "inspector").
 */
export function errorHandler(prefix: string, log: (message: string) => void): ErrorHandler {
  return (error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    const http = toHttpError(error);
    if (worthLogging(error, http)) log(`${prefix}: ${safeLine(c.req.method)} ${safeLine(c.req.path)} failed: ${describeForLog(error)}`);
    return errorResponse(c, http);
  };
}

/** The answer of an HttpError, with its code's Retry-After. */
export function errorResponse(c: Context, error: HttpError): Response {
  setRetryAfter(c, error.code);
  return c.json(error.body(), error.status);
}

/** Parses `value` with `schema`, or throws a 400 that lists every problem with its path. */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  // An issue's message may be a sentence of its own (the maxBurst advice is): one full stop.
  throw new HttpError(400, 'invalid_request', `Invalid ${what}: ${summary}${/[.!?]$/.test(summary) ? '' : '.'}`, issues);
}

/** No session `id` in the store; `hint` says where to find one (it differs per app). */
export function sessionNotFound(id: string, hint = 'List them with GET /sessions or create one with POST /sessions.'): HttpError {
  return new HttpError(404, 'session_not_found', `No session "${id}" in this store.${hint ? ` ${hint}` : ''}`);
}

/**
 * The session is in a `running` state in another process (or on another server): a send
 * here would run it twice. `state` is the running state when known (null when only its lease
 * was looked at), `holder` the process that holds its lease, if any; `advice` says how to wait,
 * or how to take it over.
 */
export function sessionRunningElsewhere(id: string, state: string | null, advice: string, holder?: string): HttpError {
  return new HttpError(
    409,
    'session_running_elsewhere',
    `Session "${id}" is running${state ? ` (${state})` : ''} in ${holder ?? 'another process'}. ${advice}`,
  );
}
