/**
 * CSV as RFC 4180 writes it, for files a person opens in a spreadsheet: a field holding a
 * comma, a quote or a line break is quoted, its quotes doubled. Written here (some twenty
 * lines) rather than taken from a library: Steward has no CSV dependency, and writing is the
 * easy half of CSV (no parsing, no dialects).
 *
 * Two protections on top, since what a cell holds was written by a model or a person:
 * - a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with
 *   `'`, so a spreadsheet shows it as text instead of running it as a formula (OWASP's "CSV
 *   injection");
 * - control and bidi characters are shown visibly (`safeText`: newlines and tabs are kept),
 *   as everything Steward prints is; a lossless copy is the JSON Lines output.
 */
import { safeText } from './safe-text.js';

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV field: made safe, protected from formula injection, quoted when it must be.
 *
 * @example
 * csvField('=1+1'); // "'=1+1"
 * csvField('a, "b"'); // '"a, ""b"""'
 */
export function csvField(value: string): string {
  const shown = safeText(value);
  const cell = FORMULA_START.test(shown) ? `'${shown}` : shown;
  return NEEDS_QUOTES.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/**
 * One CSV record, with its line break (`\r\n`, as RFC 4180 has it).
 *
 * @example
 * csvRecord(['id', 'note']); // 'id,note\r\n'
 */
export function csvRecord(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
