/**
 * Steward's error hierarchy. Every error carries a stable `code` (for APIs and the CLI's
 * exit paths) and a message that names the culprit and the fix.
 */

/** What a store fault is about (StoreError.code). */
export type StoreErrorCode = 'store_locked' | 'store_read_only' | 'store_corrupt' | 'store_full' | 'store_unavailable' | 'store_io_error';

/**
 * Every code a Steward error or a failed `send()` carries: switch on it rather than on
 * messages, which may change.
 *
 * @example
 * const result = await session.send({ type: 'user_confirmed_intake' });
 * if (!result.ok) {
 *   const code: StewardErrorCode = result.error.code;
 *   if (code === 'event_refused') console.log('offer instead:', result.error.enabled);
 * }
 */
export type StewardErrorCode =
  | 'user_error'
  | 'usage'
  | 'event_refused'
  /** A decision named a wait that is no longer open: nothing was applied (`session.send()`). */
  | 'wait_closed'
  /**
   * A decision for a wait that names who decides it (a worker's `approvers` or `reviewers`, an
   * escalation's group), sent by someone in none of those groups nor `admin`: nothing was applied.
   */
  | 'not_a_decider'
  | 'invalid_event'
  | 'invalid_package'
  | 'invalid_session_id'
  | 'invalid_cursor'
  | 'limit_exceeded'
  | 'model_error'
  /** An MCP server could not be started, reached or used (src/mcp): which one and why are in the error. */
  | 'mcp_server_failed'
  | 'script_mismatch'
  | 'transition_test_failed'
  | 'machine_mismatch'
  | 'session_not_found'
  | 'session_failed'
  | 'session_stopped'
  | 'conflict'
  | 'lease_lost'
  | 'session_running_elsewhere'
  /** An idempotency key sent again with another event than the one it was journalled with. */
  | 'idempotency_key_reused'
  | 'bad_snapshot'
  | 'internal_error'
  | StoreErrorCode
  | HttpErrorCode;

/**
 * What a request to a Steward server failed for, beyond the runtime's own codes: the codes
 * of the `{ error: { code } }` bodies only HTTP has (`steward/client` throws them as
 * RequestError), and the two a client finds itself (no answer; an answer of the wrong shape).
 */
export type HttpErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'forbidden_host'
  | 'forbidden_origin'
  | 'by_not_allowed'
  /** A decision link this server did not sign (or a malformed one): it decides nothing. */
  | 'link_invalid'
  /** A decision link past its expiry: ask for a new one. */
  | 'link_expired'
  /** The server signs no decision links: it was started without a link secret. */
  | 'links_off'
  /** The caller may see the session but not decide it (an app's own access rule said so): nothing was sent. */
  | 'decide_not_allowed'
  | 'rate_limited'
  /** More open streams than the server allows one caller (`--max-streams-per-caller`). */
  | 'too_many_streams'
  | 'server_busy'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'not_found'
  | 'method_not_allowed'
  | 'server_stopping'
  /** The inspector's model routes, when the inspector was started without --manual. */
  | 'not_manual'
  /** A reply typed into the inspector for the manual model that is not a model reply. */
  | 'invalid_reply'
  | 'network_error'
  | 'bad_response';

/**
 * Each class marks its instances with a registered symbol per class of its chain (as the AI
 * SDK does): `isInstance` then holds for an error thrown by another installed copy of
 * Steward, or by another bundle of it, where `instanceof` would not. Non-enumerable, so logs
 * and JSON stay as they were. The symbol is built from the class's `errorName`, a literal,
 * never from its `name`: a minifier renames classes (two unrelated ones may both become `r`
 * in two bundles), never string literals.
 */
const markerOf = (errorName: string): symbol => Symbol.for(`steward.error.${errorName}`);

/** A class's own `errorName`; an app's subclass that declares none goes by its class name. */
function errorNameOf(c: object): string {
  return Object.hasOwn(c, 'errorName') ? (c as typeof StewardError).errorName : (c as { name: string }).name;
}

function mark(error: Error, leaf: abstract new (...args: never[]) => unknown): void {
  for (let c: unknown = leaf; typeof c === 'function' && c !== Error && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    Object.defineProperty(error, markerOf(errorNameOf(c)), { value: true, enumerable: false });
  }
}

/**
 * The base of every error Steward throws or reports.
 *
 * @example
 * try {
 *   await runtime.resumeSession('s_missing');
 * } catch (error) {
 *   if (StewardError.isInstance(error)) console.error(error.code, error.message); // session_not_found …
 * }
 */
export class StewardError extends Error {
  /**
   * The class's name, written out so that a minified bundle keeps it (`error.name`, and the
   * marker `isInstance` looks for). Every subclass declares its own.
   */
  static readonly errorName: string = 'StewardError';
  readonly code: StewardErrorCode;
  constructor(code: StewardErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = errorNameOf(new.target);
    mark(this, new.target);
  }

  /**
   * Whether `value` is an instance of this class (`StewardError.isInstance`, `UserError.isInstance`, …),
   * also when it comes from another installed copy of Steward; Node's and SQLite's coded errors are not ours.
   *
   * @example
   * if (SessionNotFoundError.isInstance(error)) return notFound(error.sessionId);
   */
  static isInstance<T extends abstract new (...args: never[]) => StewardError>(this: T, value: unknown): value is InstanceType<T> {
    return value instanceof Error && (value as unknown as Record<symbol, unknown>)[markerOf(errorNameOf(this))] === true;
  }
}

/**
 * A bug in Steward itself (an invariant broke): not the caller's fault, and reported as such
 * (HTTP 500, never 400). The message says what broke; please report it.
 *
 * @example
 * if (InternalError.isInstance(error)) reportBug(error);
 */
export class InternalError extends StewardError {
  static override readonly errorName: string = 'InternalError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('internal_error', `${message} This is a bug in Steward: please report it.`, options);
  }
}

/**
 * The caller configured something wrongly (bad option, unknown package, …).
 *
 * @example
 * if (UserError.isInstance(error)) console.error(error.message); // names the option and the fix
 */
export class UserError extends StewardError {
  static override readonly errorName: string = 'UserError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('user_error', message, options);
  }
}

/** What a refusal is about, for an app that renders its own UI instead of the message. */
export interface RefusalDetails {
  /** The refused event's type. */
  eventType: string;
  /** The session's state when it refused, e.g. "waiting_user.intake" or "done". */
  state: string;
  /** The user events the state declares (a guard may still refuse one). */
  accepted: readonly string[];
  /** The user events the session would take now, guards evaluated. */
  enabled: readonly string[];
}

/**
 * A well-formed user event that the session's current state does not accept.
 *
 * @example
 * if (EventRefusedError.isInstance(error)) console.log(`${error.eventType} refused in ${error.state}; now: ${error.enabled.join(', ')}`);
 */
export class EventRefusedError extends StewardError implements RefusalDetails {
  static override readonly errorName: string = 'EventRefusedError';
  readonly eventType: string;
  readonly state: string;
  readonly accepted: readonly string[];
  readonly enabled: readonly string[];
  constructor(message: string, details: RefusalDetails) {
    super('event_refused', message);
    this.eventType = details.eventType;
    this.state = details.state;
    this.accepted = [...details.accepted];
    this.enabled = [...details.enabled];
  }
}

/**
 * A skill package whose manifest or prompt file is invalid; the message names file and field.
 *
 * @example
 * try { loadPackage('./packages/mine'); } catch (error) { if (PackageError.isInstance(error)) console.error(error.message); }
 */
export class PackageError extends StewardError {
  static override readonly errorName: string = 'PackageError';
  constructor(message: string) {
    super('invalid_package', message);
  }
}

/**
 * The model failed (network, HTTP status after retries, timeout).
 *
 * @example
 * const result = await session.send(event);
 * if (!result.ok && result.error.code === 'model_error') showRetry(result.error.message);
 */
export class ModelError extends StewardError {
  static override readonly errorName: string = 'ModelError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('model_error', message, options);
  }
}

/**
 * A ScriptedModel was called in a way its script did not foresee.
 *
 * @example
 * expect(() => model.assertComplete()).not.toThrow(ScriptMismatchError);
 */
export class ScriptMismatchError extends StewardError {
  static override readonly errorName: string = 'ScriptMismatchError';
  constructor(message: string) {
    super('script_mismatch', message);
  }
}

/**
 * No session with this id; `store` (a file path, for messages) names where it was looked for.
 *
 * @example
 * const session = await runtime.resumeSession(id).catch((error) => (SessionNotFoundError.isInstance(error) ? null : Promise.reject(error)));
 */
export class SessionNotFoundError extends StewardError {
  static override readonly errorName: string = 'SessionNotFoundError';
  constructor(
    readonly sessionId: string,
    readonly store?: string,
  ) {
    super('session_not_found', `No session "${sessionId}" in ${store ? `the store ${store}` : 'this store'}.`);
  }
}

/**
 * Another writer saved this session first (optimistic concurrency). Reload and retry.
 *
 * @example
 * const result = await session.send(event);
 * if (!result.ok && result.error.code === 'conflict') session = await runtime.resumeSession(session.id);
 */
export class ConflictError extends StewardError {
  static override readonly errorName: string = 'ConflictError';
  constructor(message: string) {
    super('conflict', message);
  }
}

/**
 * A write or a renewal found that this process no longer holds the session's lease (it
 * expired, e.g. after a long pause, and another server took the session over). Nothing was
 * written; the session continues on the server that holds the lease now.
 *
 * @example
 * if (LeaseLostError.isInstance(error)) console.log(`${error.sessionId} runs on another server now`);
 */
export class LeaseLostError extends StewardError {
  static override readonly errorName: string = 'LeaseLostError';
  constructor(
    readonly sessionId: string,
    message?: string,
    /** From a server (steward/client): its Retry-After in seconds; null in process. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(
      'lease_lost',
      message ??
        `This process's lease on session "${sessionId}" expired or was taken over: nothing was written. The session continues where the lease is held now; reload it to see where it is.`,
    );
  }
}

/**
 * Another process holds the session's lease (PostgresStore): it runs the session, or did
 * until it was stopped or died without letting the lease go, so this one neither runs nor
 * writes it. `holder` is that process's own description (e.g. "steward serve on web-3 pid
 * 4711"), null when the lease ran out meanwhile; `expiresInMs`, how long its lease lasts
 * unless it renews it.
 *
 * @example
 * try {
 *   await runtime.resumeSession(id);
 * } catch (error) {
 *   if (SessionLeasedError.isInstance(error)) console.log(`${id} is held by ${error.holder} for ${error.expiresInMs} ms`);
 * }
 */
export class SessionLeasedError extends StewardError {
  static override readonly errorName: string = 'SessionLeasedError';
  constructor(
    readonly sessionId: string,
    readonly holder: string | null,
    /** How long the holder's lease lasts unless it renews it (ms); null when unknown. */
    readonly expiresInMs: number | null,
    message?: string,
    /**
     * From a server (steward/client): its Retry-After in seconds, when to send again (the
     * holder runs a model call, which takes seconds); null in process.
     */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super('session_running_elsewhere', message ?? leasedMessage(sessionId, holder, expiresInMs));
  }
}

/** Held until when and by whom, and what to do: a lease says only that its holder renewed it lately, not that it lives. */
function leasedMessage(sessionId: string, holder: string | null, expiresInMs: number | null): string {
  const who = holder ?? 'another process';
  const ifGone = 'If it is gone (it ran on another host, or cannot be checked from here), the session can be resumed once its lease has run out.';
  if (expiresInMs === null)
    return `Session "${sessionId}" is held by ${who}: nothing was done here. Wait until the session waits for you, then try again. ${ifGone}`;
  const seconds = Math.max(1, Math.ceil(expiresInMs / 1000));
  const until = new Date(Date.now() + expiresInMs).toISOString().slice(11, 19);
  return (
    `Session "${sessionId}" is held by ${who}: its lease runs ${seconds} more second${seconds === 1 ? '' : 's'}, until ${until} UTC, unless renewed. ` +
    `Nothing was done here. While that process runs the session it renews the lease: wait until the session waits for you, then try again. ${ifGone}`
  );
}

/**
 * A persisted snapshot that cannot be loaded (corrupt, or from a newer schema version).
 *
 * @example
 * await runtime.resumeSession(id).catch((error) => { if (SnapshotError.isInstance(error)) markUnreadable(id); else throw error; });
 */
export class SnapshotError extends StewardError {
  static override readonly errorName: string = 'SnapshotError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad_snapshot', message, options);
  }
}

/**
 * testAllTransitions found a path its replay on a real actor does not follow, or could not walk the machine.
 *
 * @example
 * expect(() => testAllTransitions(machine)).not.toThrow(TransitionTestError);
 */
export class TransitionTestError extends StewardError {
  static override readonly errorName: string = 'TransitionTestError';
  constructor(message: string) {
    super('transition_test_failed', `testAllTransitions: ${message}`);
  }
}

/**
 * `createRuntime({ machine })` got a machine that is not `sessionMachine.provide(...)`: its
 * states or the events they take differ from Steward's chart, which the store, the journal,
 * replay and the view all read. The fields list what differs.
 *
 * @example
 * if (MachineMismatchError.isInstance(error)) console.error(error.missingStates, error.extraStates, error.changedEvents);
 */
export class MachineMismatchError extends StewardError {
  static override readonly errorName: string = 'MachineMismatchError';
  constructor(
    message: string,
    /** States of Steward's chart the machine lacks (ids like "session.waiting_user.approve_step"). */
    readonly missingStates: readonly string[],
    /** States the machine has that Steward's chart does not. */
    readonly extraStates: readonly string[],
    /** States whose events differ, with the events each side takes. */
    readonly changedEvents: readonly { state: string; expected: readonly string[]; actual: readonly string[] }[],
  ) {
    super('machine_mismatch', message);
  }
}

/**
 * A value over one of the size limits (src/core/limits.ts); `limit` names it, `setting` says where it is set.
 *
 * @example
 * if (LimitExceededError.isInstance(error)) console.log(`${error.limit}: ${error.actual} > ${error.max}`);
 */
export class LimitExceededError extends StewardError {
  static override readonly errorName: string = 'LimitExceededError';
  constructor(
    message: string,
    readonly limit: string,
    readonly max: number,
    readonly actual: number,
  ) {
    super('limit_exceeded', message);
  }
}

/**
 * The database could not be used: locked by another process, read-only, malformed, full,
 * missing or not a file. `code` says which (store_locked, store_read_only, store_corrupt,
 * store_full, store_unavailable, store_io_error); the message names the file and the fix.
 *
 * @example
 * if (StoreError.isInstance(error) && error.code === 'store_locked') setTimeout(retry, 1000);
 */
export class StoreError extends StewardError {
  static override readonly errorName: string = 'StoreError';
  constructor(
    code: StoreErrorCode,
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/**
 * The session store cannot be reached or opened: `reason` says which (server unreachable,
 * credentials refused, database missing, …). The message names the target without its
 * password, and the fix.
 *
 * @example
 * if (StoreUnavailableError.isInstance(error) && error.reason === 'bad_credentials') console.error(`Check the password for ${error.target}`);
 */
export class StoreUnavailableError extends StewardError {
  static override readonly errorName: string = 'StoreUnavailableError';
  readonly reason: 'unreachable' | 'bad_credentials' | 'missing_database' | 'other';
  /** Where the store points, password removed (e.g. "postgres://app@db:5432/steward"). */
  readonly target: string;
  constructor(reason: StoreUnavailableError['reason'], target: string, message: string, options?: { cause?: unknown }) {
    super('store_unavailable', message, options);
    this.reason = reason;
    this.target = target;
  }
}

/**
 * A session id that breaks the id rule (src/ids.ts); the message states the rule.
 *
 * @example
 * await runtime.createSession({ packageId: 'tiny', id: 'no spaces please' }); // rejects with InvalidSessionIdError
 */
export class InvalidSessionIdError extends StewardError {
  static override readonly errorName: string = 'InvalidSessionIdError';
  constructor(message: string) {
    super('invalid_session_id', message);
  }
}

/**
 * A `list()` cursor that no store handed out (garbled, truncated, or from another API).
 *
 * @example
 * const page = await store.list({ after: cursor }).catch((error) => (InvalidCursorError.isInstance(error) ? store.list() : Promise.reject(error)));
 */
export class InvalidCursorError extends StewardError {
  static override readonly errorName: string = 'InvalidCursorError';
  constructor(message: string) {
    super('invalid_cursor', message);
  }
}

/** One problem of a refused request body or query, as the server lists it. */
export interface RequestIssue {
  path: string;
  message: string;
}

/**
 * A request to a Steward server failed with a code only HTTP has (unauthorized, rate_limited,
 * invalid_request, …), the server could not be reached (network_error), or it answered
 * something that is not Steward's API (bad_response). `status` is the HTTP status (0: no
 * answer), `issues` the fields a refused body got wrong, `retryAfterSeconds` the server's
 * Retry-After. Codes the runtime has its own class for come as that class
 * (SessionNotFoundError, ConflictError, …).
 *
 * @example
 * try {
 *   await client.create({ packageId: 'tiny' });
 * } catch (error) {
 *   if (RequestError.isInstance(error) && error.code === 'rate_limited') setTimeout(retry, (error.retryAfterSeconds ?? 1) * 1000);
 * }
 */
export class RequestError extends StewardError {
  static override readonly errorName: string = 'RequestError';
  constructor(
    code: StewardErrorCode,
    message: string,
    readonly status: number,
    readonly issues: readonly RequestIssue[] = [],
    readonly retryAfterSeconds: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}
