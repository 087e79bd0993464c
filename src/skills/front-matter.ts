/**
 * Splits a worker file into its front matter and its body, as gray-matter 4 did (the loader
 * used it until it was replaced by these lines): the file opens with "---", optionally followed
 * by a language name on the same line; the front matter runs to the first line that starts with
 * "---"; the body is what follows that line. Only the split is done here: the loader refuses
 * every language but YAML, and parseFrontMatterYaml reads the YAML.
 */

/** A worker file cut at its "---" lines; `language` is the trimmed name after the opening "---" ("" for none). */
export interface FrontMatterSplit {
  language: string;
  /** The text between the opening line and the closing "---" (all the rest when there is no closing line). */
  matter: string;
  /** What follows the closing "---" line ("" when there is none). */
  body: string;
  /** The front matter holds nothing but blank lines and `#` comments (gray-matter's data was {} then, unparsed). */
  isEmpty: boolean;
}

const OPEN = '---';
const CLOSE = '\n---';

/**
 * Cuts `source` (a byte-order mark already removed) at its front matter delimiters, or returns
 * undefined when it does not start with "---". Line ends may be LF or CRLF. As in gray-matter,
 * the closing delimiter is any "---" at the start of a line (also "----" or "---x"), and one
 * line end after it belongs to it, not to the body.
 *
 * @example
 * splitFrontMatter('---\nid: writer\n---\nYou write.\n');
 * // { language: '', matter: '\nid: writer', body: 'You write.\n', isEmpty: false }
 */
export function splitFrontMatter(source: string): FrontMatterSplit | undefined {
  if (!source.startsWith(OPEN)) return undefined;
  let rest = source.slice(OPEN.length);
  const firstLineEnd = rest.search(/\r?\n/);
  const languageRaw = firstLineEnd < 0 ? rest : rest.slice(0, firstLineEnd);
  const language = languageRaw.trim();
  // A line of blanks after "---" stays in the front matter, where YAML ignores it.
  if (language !== '') rest = rest.slice(languageRaw.length);

  const close = rest.indexOf(CLOSE);
  const matter = close < 0 ? rest : rest.slice(0, close);
  let body = close < 0 ? '' : rest.slice(close + CLOSE.length);
  if (body.startsWith('\r')) body = body.slice(1);
  if (body.startsWith('\n')) body = body.slice(1);
  const isEmpty = matter.replace(/^\s*#[^\n]+/gm, '').trim() === '';
  return { language, matter, body, isEmpty };
}
