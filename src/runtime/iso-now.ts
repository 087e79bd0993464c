/**
 * The time a user event is stamped with (`at`), as `Date.prototype.toISOString` writes it,
 * without a Date per event: the text up to the second is kept for the second it was made in,
 * and only the milliseconds are written anew. Every accepted user event is stamped on the hot
 * path (`session.send()`), where formatting a Date was one of the dearest steps.
 */
let second = Number.NaN;
let prefix = '';

/** `new Date(ms).toISOString()` for a time in years 0–9999 (what Date.now() gives). */
export function isoAt(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s !== second) {
    second = s;
    prefix = new Date(s * 1000).toISOString().slice(0, 20); // "YYYY-MM-DDTHH:MM:SS."
  }
  const milli = ms - s * 1000;
  return `${prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

export const isoNow = (): string => isoAt(Date.now());
