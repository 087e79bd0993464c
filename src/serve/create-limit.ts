/**
 * The one create limit of `steward serve` (`--max-creates-per-minute`): every route that
 * creates a session — POST /sessions, a fork, an AG-UI run on a new thread, an A2A message to
 * a new context — spends one of its caller's creations from the same bucket (src/http/rate-limit.ts),
 * so no route is a way around another's limit.
 */
import type { Caller } from '../http/auth.js';
import { HttpError } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { ErrorBody } from './schemas.js';

/** The 429 of a route that creates a session, as its declaration says it. */
export const CREATE_LIMIT_RESPONSE = {
  description:
    'rate_limited: this caller created as many sessions in the last minute as --max-creates-per-minute allows ' +
    '(POST /sessions, forks, new AG-UI threads and A2A contexts together): retry after the `Retry-After` header (seconds)',
  content: { 'application/json': { schema: ErrorBody } },
  headers: { 'Retry-After': { description: 'seconds until this caller may create a session again', schema: { type: 'string' as const } } },
};

/**
 * A caller created as many sessions as the limit allows: 429 `rate_limited`, with when to
 * come back (`retryAfterSeconds`, the Retry-After header) and the setting that raises it.
 *
 * @example
 * if (CreateLimitError.isInstance(error)) console.log(`back in ${error.retryAfterSeconds} s (limit ${error.perMinute}/min)`);
 */
export class CreateLimitError extends HttpError {
  static override readonly errorName: string = 'CreateLimitError';
  constructor(
    readonly perMinute: number,
    retryAfterSeconds: number,
  ) {
    super(
      429,
      'rate_limited',
      `Too many sessions created: ${perMinute} per minute per caller is this server's limit (POST /sessions, forks, new AG-UI threads and new A2A contexts together). ` +
        `Retry in ${retryAfterSeconds} s, reuse a session, or start the server with a higher --max-creates-per-minute (startServe / createServeApp maxCreatesPerMinute; 0: no limit).`,
      undefined,
      retryAfterSeconds,
    );
  }
}

/**
 * Spends one of `caller`'s session creations, or throws CreateLimitError. Callers are told
 * apart by the credential the auth middleware verified, never by how a header is spelled (a
 * new spelling must not buy a new allowance); without tokens every client is the same one.
 *
 * @example
 * await host.create({ packageId, admit: () => admitCreate(createLimit, c.get('caller')) });
 */
export function admitCreate(limit: RateLimiter | null, caller: Caller | undefined): void {
  if (!limit) return;
  const decision = limit.take(caller?.name ?? 'anonymous');
  if (!decision.ok) throw new CreateLimitError(limit.perMinute, decision.retryAfterSeconds);
}

/**
 * Throws CreateLimitError when `caller` has no creation left, spending none: a route that must
 * answer the limit before its response starts (an AG-UI run's Retry-After header) asks this
 * first, and spends with admitCreate only once the request is known to create a session.
 *
 * @example
 * checkCreateAllowance(createLimit, caller); // before streaming; then host.create({ …, admit: () => admitCreate(createLimit, caller) })
 */
export function checkCreateAllowance(limit: RateLimiter | null, caller: Caller | undefined): void {
  if (!limit) return;
  const decision = limit.peek(caller?.name ?? 'anonymous');
  if (!decision.ok) throw new CreateLimitError(limit.perMinute, decision.retryAfterSeconds);
}
