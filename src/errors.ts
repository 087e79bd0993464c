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
    return value instanceof Error && (value as unknown as Record<symbol, unknown>)[STEWARD_ERROR] === true;
  }
}

/** The caller configured something wrongly (bad option, unknown package, …). */
export class UserError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('user_error', message, options);
  }
}

/** A well-formed user event that the session's current state does not accept. */
export class EventRefusedError extends StewardError {
  constructor(message: string) {
    super('event_refused', message);
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

export class SessionNotFoundError extends StewardError {
  constructor(sessionId: string) {
    super('session_not_found', `No session "${sessionId}" in this store. List the sessions with \`steward list\` or create one with \`steward new\`.`);
  }
}

/** Another writer saved this session first (optimistic concurrency). Reload and retry. */
export class ConflictError extends StewardError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** A persisted snapshot that cannot be loaded (corrupt, or from a newer schema version). */
export class SnapshotError extends StewardError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad_snapshot', message, options);
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
