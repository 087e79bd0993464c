/**
 * The one rule for session ids, checked wherever an id enters: createSession({ id }),
 * resumeSession, forkSession, the stores' create(), the CLI's id arguments and the HTTP
 * path of `steward serve`. An id is 1 to 200 characters with no control or invisible
 * characters: what every store can hold (PostgreSQL text cannot hold NUL), what a URL path
 * and a terminal line can carry, and what a person can read back and type.
 *
 * Printable characters beyond ASCII stay allowed: ids are caller-chosen and sessions
 * created with such ids must stay reachable. Generated ids (`s_…`) are plain ASCII.
 */
import { InvalidSessionIdError } from './core/errors.js';
import { CONTROL_OR_INVISIBLE } from './core/text/names.js';

export const SESSION_ID_MAX_CHARS = 200;

export const SESSION_ID_RULE = `a session id has 1 to ${SESSION_ID_MAX_CHARS} characters, none of them a control or invisible character, and is not "." or ".."`;

/** What is wrong with `id` as a session id (without echoing it: it may hold control characters), or null. */
export function sessionIdProblem(id: unknown): string | null {
  if (typeof id !== 'string') return `the session id is ${id === null ? 'null' : typeof id}, not a string`;
  if (id.length === 0) return 'the session id is empty';
  if (id.length > SESSION_ID_MAX_CHARS) return `the session id has ${id.length} characters`;
  // A URL path cannot carry them: fetch and browsers resolve them away before sending.
  if (id === '.' || id === '..') return `the session id is "${id}"`;
  const bad = CONTROL_OR_INVISIBLE.exec(id);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return `character ${bad.index + 1} of the session id is U+${code}`;
  }
  return null;
}

/**
 * `id` when it is a valid session id; an InvalidSessionIdError naming the rule otherwise. `where` names the caller.
 *
 * @example
 * const id = checkSessionId(request.params.id, 'GET /sessions/:id'); // throws InvalidSessionIdError
 */
export function checkSessionId(id: unknown, where: string): string {
  const problem = sessionIdProblem(id);
  if (problem) throw new InvalidSessionIdError(`${where}: ${problem}, but ${SESSION_ID_RULE}.`);
  return id as string;
}
