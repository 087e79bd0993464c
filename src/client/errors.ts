/**
 * A failed answer of `steward serve` as the library's typed errors. The server's one error
 * body `{ error: { code, message, issues? } }` (ErrorBody, src/http/error-body.ts) becomes the class the runtime
 * throws for that code — so `SessionNotFoundError.isInstance(error)` holds for a session the
 * server does not know, as it does in process — and RequestError for the codes only HTTP has.
 * The message is the server's: it names the fix.
 */
import {
  ConflictError,
  EventRefusedError,
  InvalidCursorError,
  InvalidSessionIdError,
  LeaseLostError,
  PackageError,
  RequestError,
  SessionLeasedError,
  SessionNotFoundError,
  StewardError,
  UserError,
  type StewardErrorCode,
} from '../core/errors.js';
import { ErrorBody } from '../http/error-body.js';

/** The runtime's classes, by the code they carry; `id` is the session the request was about. */
const classOfCode: Partial<Record<StewardErrorCode, (message: string, id: string | undefined, retryAfterSeconds: number | null) => StewardError>> = {
  session_not_found: (_message, id) => new SessionNotFoundError(id ?? ''),
  event_refused: (message) => new EventRefusedError(message, { eventType: '', state: '', accepted: [], enabled: [] }),
  conflict: (message) => new ConflictError(message),
  lease_lost: (message, id, retryAfterSeconds) => new LeaseLostError(id ?? '', message, retryAfterSeconds),
  session_running_elsewhere: (message, id, retryAfterSeconds) => new SessionLeasedError(id ?? '', null, null, message, retryAfterSeconds),
  invalid_cursor: (message) => new InvalidCursorError(message),
  invalid_session_id: (message) => new InvalidSessionIdError(message),
  invalid_package: (message) => new PackageError(message),
  user_error: (message) => new UserError(message),
};

/** The typed error of a failed response whose body is `body` (already read; undefined when it was not JSON). */
export function errorOfResponse(response: Response, body: unknown, sessionId?: string): StewardError {
  const retryAfterSeconds = retryAfterOfResponse(response);
  const what = `${response.status} ${response.statusText}`.trim();
  return errorOfBody(body, response.status, { retryAfterSeconds, what, ...(sessionId !== undefined ? { sessionId } : {}) });
}

/** The answer's Retry-After in seconds (null when it has none, or it is not a positive number of seconds). */
export function retryAfterOfResponse(response: Response): number | null {
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null;
}

/** The typed error of an error body `{ error: { code, message, issues? } }`, from an answer with `status` (or a stream's `event: error`). */
export function errorOfBody(
  body: unknown,
  status: number,
  context: { retryAfterSeconds?: number | null; sessionId?: string; what?: string } = {},
): StewardError {
  const parsed = ErrorBody.safeParse(body);
  const retryAfterSeconds = context.retryAfterSeconds ?? null;
  if (!parsed.success) {
    return new RequestError(
      'bad_response',
      `The server answered ${context.what ?? status} with no Steward error body: is the client's baseUrl a \`steward serve\` (or an app that mounts it)?`,
      status,
      [],
      retryAfterSeconds,
    );
  }
  // The server's codes are Steward's (StewardErrorCode); a newer server's new code still comes through as it is.
  const code = parsed.data.error.code as StewardErrorCode;
  const { message, issues } = parsed.data.error;
  const own = classOfCode[code];
  if (own) {
    const error = own(message, context.sessionId, retryAfterSeconds);
    // The server's message, which names the server's fix (the class's own names the in-process one).
    error.message = message;
    return error;
  }
  return new RequestError(code, message, status, issues ?? [], retryAfterSeconds);
}

/** The error of a request that got no answer (the server is down, the network failed, CORS refused it). */
export function networkError(url: string, cause: unknown): RequestError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new RequestError(
    'network_error',
    `No answer from ${url} (${why}): is the server running, and does it allow this page's origin (steward serve --cors-origin)?`,
    0,
    [],
    null,
    { cause },
  );
}

/** An answer whose body does not have the documented shape (validated with the server's own schema). */
export function badResponse(what: string, status: number, problem: string): RequestError {
  return new RequestError('bad_response', `The server's answer to ${what} is not Steward's API (${problem}): do client and server versions match?`, status);
}
