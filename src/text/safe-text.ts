/**
 * Text a model, a package, a user or an HTTP client wrote, made safe for a terminal or a
 * log. Raw, it could clear the screen (ESC [2J), set the window title (ESC ]0;…BEL), plant
 * a hyperlink whose target differs from its text (OSC 8), forge a log line (CR, LF), or
 * reorder what is read with a bidi override (U+202E).
 * Every such character is shown visibly instead, so nothing is hidden and nothing acts:
 * - C0 controls as the Unicode control pictures (ESC → ␛, BEL → ␇, CR → ␍), DEL as ␡;
 * - C1 controls (U+0080–U+009F; U+009B is an 8-bit CSI) as `\x9b`;
 * - bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) and the line and
 *   paragraph separators U+2028 / U+2029 as `<U+202E>`.
 * Newlines and tabs stay in multi-line text (`safeText`); one-line text (`safeLine`: titles,
 * table cells) shows them too. Steward's own colours are added after this, so they stay.
 * One regex with a character class and no quantifier: linear in the text's length.
 */

// eslint-disable-next-line no-control-regex
const UNSAFE_IN_TEXT = /\r\n|[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_LINE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;
/** What JSON.stringify leaves raw but a terminal acts on: C1, bidi, U+2028 / U+2029. */
const UNSAFE_IN_JSON = /[\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

const hex = (code: number, width: number) => code.toString(16).padStart(width, '0');

function visible(char: string): string {
  if (char === '\r\n') return '\n'; // a Windows line ending is a line ending, not a CR to show
  const code = char.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  if (code < 0xa0) return `\\x${hex(code, 2)}`;
  return `<U+${hex(code, 4).toUpperCase()}>`;
}

/** Multi-line text (an artifact body, a message): newlines and tabs kept, every other control shown. */
export function safeText(text: string): string {
  return text.replace(UNSAFE_IN_TEXT, visible);
}

/** One line (a title, a table cell, a name): newlines and tabs shown as ␊ and ␉ too. */
export function safeLine(text: string): string {
  return text.replace(UNSAFE_IN_LINE, visible);
}

/** One line with every unsafe character replaced by `replacement` (the compact progress lines). */
export function safeLineAs(text: string, replacement: string): string {
  return text.replace(UNSAFE_IN_LINE, replacement);
}

/**
 * JSON text safe to print: JSON.stringify already escapes U+0000–U+001F, and these
 * characters can only occur inside strings, so `\uXXXX` for the rest keeps the JSON valid
 * and its parsed value identical.
 */
export function safeJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}
