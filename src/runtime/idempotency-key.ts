/**
 * What an idempotency key may be: its own module, free of Node built-ins, because
 * steward/client checks the key it sends with the server's own schema (src/serve/schemas.ts).
 */
import * as z from 'zod';

/** The longest key: a UUID is 36 characters, a ULID 26; room for a prefix. */
const IDEMPOTENCY_KEY_MAX_CHARS = 200;

/**
 * A key: 1 to 200 visible ASCII characters of the kind UUIDs, ULIDs and "client:request-7"
 * are made of. No spaces or control characters, so it prints as one safe line.
 */
export const IdempotencyKeySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(IDEMPOTENCY_KEY_MAX_CHARS, `must be at most ${IDEMPOTENCY_KEY_MAX_CHARS} characters`)
  .regex(/^[A-Za-z0-9._:~+/=-]+$/, 'may hold only letters, digits and . _ : ~ + / = - (a UUID or ULID is fine)');
