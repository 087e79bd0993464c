/**
 * Idempotency keys of `session.send(event, { idempotencyKey })`: a client that retries a send
 * after a timeout passes the same key, and a key already journalled for the session gives the
 * stored result back instead of sending again (docs/design.md "Idempotent sends"). The key
 * is journalled with the event's entry (one transaction), so a retry on another server on
 * the same PostgreSQL database, or after a restart, finds it too.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../skills/package-version.js';

/** The longest key: a UUID is 36 characters, a ULID 26; room for a prefix. */
export const IDEMPOTENCY_KEY_MAX_CHARS = 200;

/**
 * A key: 1 to 200 visible ASCII characters of the kind UUIDs, ULIDs and "client:request-7"
 * are made of. No spaces or control characters, so it prints as one safe line.
 */
export const IdempotencyKeySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(IDEMPOTENCY_KEY_MAX_CHARS, `must be at most ${IDEMPOTENCY_KEY_MAX_CHARS} characters`)
  .regex(/^[A-Za-z0-9._:~+/=-]+$/, 'may hold only letters, digits and . _ : ~ + / = - (a UUID or ULID is fine)');

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
}

/** The event as the client sent it, hashed: the runtime's own stamp (`at`) left out. */
export function eventFingerprint(raw: unknown): string {
  const sent = raw && typeof raw === 'object' && !Array.isArray(raw) ? Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'at')) : raw;
  return `sha256:${createHash('sha256').update(canonicalJson(sent)).digest('hex')}`;
}

/** Why a key cannot be used, or null when it can. */
export function idempotencyKeyProblem(key: unknown): string | null {
  const parsed = IdempotencyKeySchema.safeParse(key);
  return parsed.success ? null : `idempotencyKey ${parsed.error.issues[0]!.message}`;
}
