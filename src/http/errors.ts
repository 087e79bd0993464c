/**
 * How Steward's HTTP servers (`steward serve` and the inspector) fail: one JSON shape,
 * `{ error: { code, message, issues? } }` (ErrorBody, ./error-body.ts), a status that matches the code, and a message that names the fix. What a client of
 * any route is told (`clientError`, also for AG-UI and A2A) never names a database file, host
 * or database; the server's log gets the whole error.
 */
import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { StewardError, type StewardErrorCode } from '../core/errors.js';
import { safeLine, safeText } from '../text/safe-text.js';
import type { ErrorBodyShape, Issue } from './error-body.js';

export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 503;

/**
 * An answer of Steward's HTTP servers that is an error: `status` and the body `{ error: { code,
 * message, issues? } }` (`body()`). A Steward error like the runtime's, so `StewardError.isInstance`
 * and `code` hold for it too.
 *
 * @example
 * throw new HttpError(404, 'not_found', `No package "${id}" here: post to /ag-ui/<package>.`);
 */
export class HttpError extends StewardError {
  static override readonly errorName: string = 'HttpError';
  constructor(
    readonly status: HttpStatus,
    code: StewardErrorCode,
    message: string,
    readonly issues?: Issue[],
    /** When to come back (the Retry-After header, seconds), if this answer's own; else its code's (`retryAfterOf`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(code, message);
  }

  /**
   * The answer's JSON body.
   *
   * @example
   * return c.json(error.body(), error.status);
   */
  body(): ErrorBodyShape {
    return { error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) } };
  }
}

/** The status of an answer with each code: every code has one, or the build fails. */
const statusOfCode = {
  user_error: 400,
  usage: 400,
  invalid_event: 400,
  invalid_package: 400,
  invalid_session_id: 400,
  invalid_cursor: 400,
  invalid_request: 400,
  invalid_reply: 400,
  limit_exceeded: 400,
  unauthorized: 401,
  forbidden: 403,
  forbidden_host: 403,
  forbidden_origin: 403,
  by_not_allowed: 403,
  decide_not_allowed: 403,
  not_a_decider: 403,
  session_not_found: 404,
  link_invalid: 404,
  links_off: 404,
  link_expired: 410,
  not_found: 404,
  method_not_allowed: 405,
  event_refused: 409,
  wait_closed: 409,
  conflict: 409,
  lease_lost: 409,
  session_running_elsewhere: 409,
  not_manual: 409,
  body_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  too_many_streams: 429,
  // The server is full, not down: the client may send again shortly (the send route's 429).
  server_busy: 429,
  session_stopped: 503,
  server_stopping: 503,
  // Transient: the database is back in a moment, or its other writer lets go.
  store_unavailable: 503,
  store_locked: 503,
  // Not transient: an operator must act (permissions, a damaged file, a full disk).
  store_read_only: 500,
  store_corrupt: 500,
  store_full: 500,
  store_io_error: 500,
  bad_snapshot: 500,
  session_failed: 500,
  internal_error: 500,
  // The server could not finish the request: which upstream failed is its log's business.
  model_error: 500,
  mcp_server_failed: 500,
  // Faults of the app's own set-up or tests (a scripted model, a provided machine), never the caller's.
  script_mismatch: 500,
  transition_test_failed: 500,
  machine_mismatch: 500,
  // Only steward/client finds these (status 0 there); a server that met one failed itself.
  network_error: 500,
  bad_response: 500,
} as const satisfies Record<StewardErrorCode, HttpStatus>;

/** Whether `code` is Steward's (StewardErrorCode); a protocol's own (AG-UI's `thread_running`) or a driver's is not. */
function isErrorCode(code: string): code is StewardErrorCode {
  return Object.hasOwn(statusOfCode, code);
}

/**
 * Seconds a client should wait before it sends again, by code (the Retry-After header). A
 * session running elsewhere runs a model call, which takes seconds: a client polling faster
 * only loads the servers that are taking a dead server's sessions over, and slows those
 * takeovers (bench/README.md, "Load"). A client that follows the session's stream learns the
 * moment it waits again.
 */
const retryAfterOfCode: Partial<Record<StewardErrorCode, number>> = {
  server_busy: 1,
  session_running_elsewhere: 1,
  lease_lost: 1,
  server_stopping: 1,
  store_locked: 1,
};

/** The Retry-After (seconds) of an answer with `code`, when one tells a client to come back. */
export function retryAfterOf(code: string): number | undefined {
  return isErrorCode(code) ? retryAfterOfCode[code] : undefined;
}

/** Sets the answer's Retry-After when `code` tells a client to come back. */
export function setRetryAfter(c: Context, code: string): void {
  const retryAfter = retryAfterOf(code);
  if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
}

/**
 * What a remote client is told instead of a message that may name where the data lives (a
 * database file, a PostgreSQL host and database) or carry a driver's text: the operator's
 * business, which the server's log keeps. A store_unavailable names its target even without a
 * password; a failed session's message quotes the fault that stopped it.
 */
const INTERNAL_ERROR_MESSAGE = 'The server failed on this request; its log has the details.';
const forClients: Partial<Record<StewardErrorCode, string>> = {
  store_unavailable: "The database is unreachable: retry in a moment. The server's log says which database and why.",
  store_locked: 'The store is locked by another process (another Steward process writing, or a program holding it open): retry in a moment.',
  session_failed: 'The session stopped on a fault of the server (its log has the details); it keeps its last saved step: send again to go on from there.',
  internal_error: INTERNAL_ERROR_MESSAGE,
};

/** A code of Steward's (lowercase words joined by `_`); a driver's or Node's (ECONNREFUSED, 57P01, SQLITE_BUSY) is not one. */
const OUR_CODE = /^[a-z]+(?:_[a-z]+)*$/;

/** An error as a client may see it: its status, code and a safe message; `log`: the server's log should have the whole error. */
export interface ClientError {
  status: HttpStatus;
  code: string;
  message: string;
  issues?: Issue[];
  /** Seconds until the client should come back (Retry-After), when it should. */
  retryAfterSeconds?: number;
  log: boolean;
}

/**
 * Any error as a client of any route (REST, AG-UI, A2A) may see it: an HttpError as it is; a
 * Steward error, or a refusal `{ code, message }` with a code of ours, by its code, with the
 * message replaced where it may name a file, a database or a fault's text; anything else is an
 * internal error. `log` gets the whole error when the client is not told all of it.
 *
 * @example
 * const { code, message } = clientError(error, (details) => log(`serve: an AG-UI run failed: ${details}`));
 * emit({ type: EventType.RUN_ERROR, code, message });
 */
export function clientError(error: unknown, log?: (details: string) => void): ClientError {
  const safe = clientErrorOf(error);
  if (safe.log) log?.(describeForLog(error));
  return safe;
}

function clientErrorOf(error: unknown): ClientError {
  if (HttpError.isInstance(error)) {
    const retryAfterSeconds = error.retryAfterSeconds ?? retryAfterOf(error.code);
    return {
      status: error.status,
      code: error.code,
      message: error.message,
      ...(error.issues ? { issues: error.issues } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      log: error.status === 500,
    };
  }
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const ours = StewardError.isInstance(error) || (typeof code === 'string' && OUR_CODE.test(code) && typeof message === 'string');
  if (!ours || typeof code !== 'string' || typeof message !== 'string')
    return { status: 500, code: 'internal_error', message: INTERNAL_ERROR_MESSAGE, log: true };
  const replaced =
    (isErrorCode(code) ? forClients[code] : undefined) ??
    (code.startsWith('store_') ? `The store failed (${code}): the server's log has the details.` : undefined);
  const retryAfterSeconds = retryAfterOf(code);
  return {
    status: statusOf(code),
    code,
    message: replaced ?? message,
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    log: replaced !== undefined,
  };
}

/**
 * The status of an answer with `code`; a code that is not Steward's is a 500.
 *
 * @example
 * return c.json(clientResult(result, log), statusOf(result.error.code));
 */
export function statusOf(code: string): HttpStatus {
  return isErrorCode(code) ? statusOfCode[code] : 500;
}

/** A failed SendResult as a remote client may see it (`clientError`): a store fault's file goes to `log` only. */
export function clientResult<R extends { ok: boolean; error?: { code: string; message: string } }>(result: R, log: (message: string) => void): R {
  if (result.ok || !result.error) return result;
  const { message } = clientError(result.error, (details) => log(`a send failed: ${details}`));
  return message === result.error.message ? result : { ...result, error: { ...result.error, message } };
}

/** Any error as the HttpError a client is answered with (`clientError`). */
export function toHttpError(error: unknown, log?: (details: string) => void): HttpError {
  const safe = clientError(error, log);
  if (!isErrorCode(safe.code)) {
    // A refusal of our shape with a code no Steward API answers (a protocol's own): a bug here.
    if (!safe.log) log?.(describeForLog(error));
    return new HttpError(500, 'internal_error', INTERNAL_ERROR_MESSAGE);
  }
  return new HttpError(safe.status, safe.code, safe.message, safe.issues, safe.retryAfterSeconds);
}

/** `error` for a log line: its stack when it has one (a refusal `{ code, message }`: both), inert text either way. */
export function describeForLog(error: unknown): string {
  if (error instanceof Error) return safeText(error.stack ?? error.message);
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return safeText(typeof message === 'string' ? `${String(code)}: ${message}` : String(error));
}

/**
 * The app's `onError`: every failure answers the one JSON shape; an HTTPException (hono's
 * bearer-auth refusals, which carry that shape already) answers as it is. `log` lines start
 * with `prefix` ("serve", "inspector").
 */
export function errorHandler(prefix: string, log: (message: string) => void): ErrorHandler {
  return (error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    return errorResponse(
      c,
      toHttpError(error, (details) => log(`${prefix}: ${safeLine(c.req.method)} ${safeLine(c.req.path)} failed: ${details}`)),
    );
  };
}

/** The answer of an HttpError, with its Retry-After (its own, else its code's). */
export function errorResponse(c: Context, error: HttpError): Response {
  const retryAfter = error.retryAfterSeconds ?? retryAfterOf(error.code);
  if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
  return c.json(error.body(), error.status);
}

/**
 * The 400 of a value that failed its schema: `Invalid <what>: <path>: <problem>; …`, every
 * issue listed with its path.
 *
 * @example
 * throw invalidRequest(result.error.issues, 'query');
 */
export function invalidRequest(zodIssues: readonly { path: readonly PropertyKey[]; message: string }[], what: string): HttpError {
  const issues = zodIssues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  // An issue's message may be a sentence of its own (the maxBurst advice is): one full stop.
  return new HttpError(400, 'invalid_request', `Invalid ${what}: ${summary}${/[.!?]$/.test(summary) ? '' : '.'}`, issues);
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
