/**
 * Idempotency keys of `session.send(event, { idempotencyKey })`: a client that retries a send
 * after a timeout passes the same key, and a key already journalled for the session gives the
 * stored result back instead of sending again (docs/design.md "Idempotent sends"). The key
 * is journalled with the event's entry (one transaction), so a retry on another server on
 * the same PostgreSQL database, or after a restart, finds it too.
 */
import { createHash } from 'node:crypto';
import { IdempotencyKeySchema } from './idempotency-key.js';
import { canonicalJson } from '../core/text/canonical-json.js';

/** The options of `session.send`. */
export interface SendOptions {
  /**
   * Makes the send count once: a send with a key already journalled for this session (one of
   * its latest SEND_KEYS_KEPT) changes nothing and resolves with the stored result (and
   * `repeated: true`); the same key with another event is refused (`idempotency_key_reused`).
   */
  idempotencyKey?: string;
  /**
   * Called once the session took the event (not refused) and its journal entry is written,
   * before the run it starts is over: a server answers "accepted" here (`Prefer: respond-async`).
   */
  onAccepted?: () => void;
  /**
   * Called when this send's turn comes (the sends queued before it are over), before its event
   * reaches the session: a listener attached then hears this send's run, not an earlier one's.
   */
  onTurn?: () => void;
}

/**
 * The event as the client sent it, hashed: the runtime's own stamp (`at`) left out, and the
 * wait it names (`wait`): a protocol route names the wait open when it reads the session, so
 * a retry read later names a later one for the same decision; the key alone says it is a retry.
 */
export function eventFingerprint(raw: unknown): string {
  const sent =
    raw && typeof raw === 'object' && !Array.isArray(raw) ? Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'at' && k !== 'wait')) : raw;
  return `sha256:${createHash('sha256').update(canonicalJson(sent)).digest('hex')}`;
}

/** Why a key cannot be used, or null when it can. */
export function idempotencyKeyProblem(key: unknown): string | null {
  const parsed = IdempotencyKeySchema.safeParse(key);
  return parsed.success ? null : `idempotencyKey ${parsed.error.issues[0]!.message}`;
}
