/**
 * The JSON every store writes (snapshots, journal payloads, archived items), serialised once
 * and refused with a message that names the value when it is not JSON.
 */
import { UserError } from '../core/errors.js';

export function toJson(value: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    // Cycles and BigInts: say which value, not just "Converting circular structure".
    throw new UserError(`Cannot store ${what}: ${(error as Error).message}.`, { cause: error });
  }
  // JSON.stringify(undefined) is undefined, not a string: catch it here, not as a NOT NULL error.
  if (json === undefined) throw new UserError(`Cannot store ${what}: it is not JSON-serialisable (got ${typeof value}).`);
  return json;
}
