/**
 * What a name or an id may hold, and how two names are compared as a reader sees them.
 * Browser-safe: the chart's event schemas use it too.
 */

/**
 * Characters no id or name may hold: control characters (C0, DEL, C1: NUL, ESC, newlines…),
 * format characters (bidi overrides, zero-width), lone surrogates, line and paragraph
 * separators. They forge log lines, hide text, or cannot be stored (NUL in PostgreSQL).
 */
export const CONTROL_OR_INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * A name as it reads: compatibility-folded (NFKC: "Ｓteward", "ſteward" → "steward") and in
 * lower case, so a reserved name cannot come back in another width, case or ligature.
 * Look-alikes from other scripts (a Cyrillic "е") are not folded: that needs Unicode's
 * confusables table, which a server that wants it applies to its token names itself.
 */
export function foldName(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}
