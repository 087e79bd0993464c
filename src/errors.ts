/**
 * Steward's error hierarchy. Every error carries a stable `code` (for APIs and the CLI's
 * exit paths) and a message that names the culprit and the fix.
 */
const STEWARD_ERROR = Symbol.for('steward.error');

export class StewardError extends Error {
  readonly code: string;
  /** The marker `isStewardError` looks for (a registered symbol: shared by every copy of Steward). */
  readonly [STEWARD_ERROR] = true;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }

  /** Works across duplicated installs, where `instanceof` would not; Node's and SQLite's coded errors are not ours. */
  static isStewardError(value: unknown): value is StewardError {
    return value instanceof Error && (value as Error & { [STEWARD_ERROR]?: unknown })[STEWARD_ERROR] === true;
  }
}

/** The caller configured something wrongly (bad option, unknown package, …). */
export class UserError extends StewardError {
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

/** A well-formed user event that the session's current state does not accept. */
export class EventRefusedError extends StewardError implements RefusalDetails {
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

/** A skill package whose manifest or prompt file is invalid; the message names file and field. */
export class PackageError extends StewardError {
  constructor(message: string) {
    super('invalid_package', message);
  }
}

/** The model failed (network, HTTP status after retries, timeout). */
export class ModelError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('model_error', message, options);
  }
}

/** A ScriptedModel was called in a way its script did not foresee. */
export class ScriptMismatchError extends StewardError {
  constructor(message: string) {
    super('script_mismatch', message);
  }
}

/** No session with this id; `store` (a file path, for messages) names where it was looked for. */
export class SessionNotFoundError extends StewardError {
  constructor(readonly sessionId: string, readonly store?: string) {
    super('session_not_found', `No session "${sessionId}" in ${store ? `the store ${store}` : 'this store'}.`);
  }
}

/** Another writer saved this session first (optimistic concurrency). Reload and retry. */
export class ConflictError extends StewardError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/**
 * A write or a renewal found that this process no longer holds the session's lease (it
 * expired, e.g. after a long pause, and another server took the session over). Nothing was
 * written; the session continues on the server that holds the lease now.
 */
export class LeaseLostError extends StewardError {
  constructor(readonly sessionId: string, message?: string) {
    super('lease_lost', message ?? `This process's lease on session "${sessionId}" expired or was taken over: nothing was written. The session continues where the lease is held now; reload it to see where it is.`);
  }
}

/**
 * Another process holds the session's lease (PostgresStore): it is running the session now,
 * so this one neither runs nor writes it. `holder` is that process's own description
 * (e.g. "steward serve on web-3 pid 4711"), null when the lease ran out meanwhile.
 */
export class SessionLeasedError extends StewardError {
  constructor(
    readonly sessionId: string,
    readonly holder: string | null,
    /** How long the holder's lease lasts unless it renews it (ms); null when unknown. */
    readonly expiresInMs: number | null,
    message?: string,
  ) {
    super(
      'session_running_elsewhere',
      message ??
        `Session "${sessionId}" is running in ${holder ?? 'another process'} right now (it holds the session's lease): nothing was done here. ` +
          'Wait until it waits for you, then try again' +
          (expiresInMs !== null ? `; if that process is gone, its lease runs out within ${Math.ceil(expiresInMs / 1000)} s and the session can be resumed then.` : '.'),
    );
  }
}

/** A persisted snapshot that cannot be loaded (corrupt, or from a newer schema version). */
export class SnapshotError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad_snapshot', message, options);
  }
}

/** testAllTransitions found a path its replay on a real actor does not follow, or could not walk the machine. */
export class TransitionTestError extends StewardError {
  constructor(message: string) {
    super('transition_test_failed', `testAllTransitions: ${message}`);
  }
}

/** A value over one of the size limits (src/limits.ts); `limit` names it, `setting` says where it is set. */
export class LimitExceededError extends StewardError {
  constructor(message: string, readonly limit: string, readonly max: number, readonly actual: number) {
    super('limit_exceeded', message);
  }
}

/**
 * The database could not be used: locked by another process, read-only, malformed, full,
 * missing or not a file. `code` says which (store_locked, store_read_only, store_corrupt,
 * store_full, store_unavailable, store_io_error); the message names the file and the fix.
 */
export class StoreError extends StewardError {
  constructor(code: `store_${string}`, message: string, readonly path: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * The session store cannot be reached or opened: `reason` says which (server unreachable,
 * credentials refused, database missing, …). The message names the target without its
 * password, and the fix.
 */
export class StoreUnavailableError extends StewardError {
  readonly reason: 'unreachable' | 'bad_credentials' | 'missing_database' | 'other';
  /** Where the store points, password removed (e.g. "postgres://app@db:5432/steward"). */
  readonly target: string;
  constructor(reason: StoreUnavailableError['reason'], target: string, message: string, options?: { cause?: unknown }) {
    super('store_unavailable', message, options);
    this.reason = reason;
    this.target = target;
  }
}

/** A session id that breaks the id rule (src/ids.ts); the message states the rule. */
export class InvalidSessionIdError extends StewardError {
  constructor(message: string) {
    super('invalid_session_id', message);
  }
}

/** A `list()` cursor that no store handed out (garbled, truncated, or from another API). */
export class InvalidCursorError extends StewardError {
  constructor(message: string) {
    super('invalid_cursor', message);
  }
}
