/**
 * The YAML parser of worker front matter (split off the file by splitFrontMatter). A package is data a
 * stranger may have written, so the parse is bounded by the text it reads:
 *
 * - **No anchors or aliases.** Nine lines of `&l1 [*l0, *l0, …]` expand to 9^9 values: the
 *   parsed value is small (aliases share one object), but anything that walks it (zod, an
 *   error message's preview) walks the expansion. The document is checked as a syntax tree,
 *   before any JavaScript value exists, and refused if it has an anchor or an alias. Front
 *   matter is five short fields: writing a value twice costs an author nothing.
 * - **No tags the parser does not know** (`!!js/function`, `!foo`): they are refused, never
 *   read as a plain string the author did not mean.
 * - YAML 1.2's core schema: plain strings, numbers, booleans, null, lists and maps (a date
 *   stays a string); a `__proto__` key is an own key, never the prototype.
 */
import { isAlias, isNode, parseDocument, visit } from 'yaml';

/** Front matter that uses a YAML anchor (`&name`) or alias (`*name`); `detail` says which, e.g. "anchor &l0". */
export class YamlAliasRefusedError extends Error {
  constructor(readonly detail: string) {
    super(`YAML aliases are not allowed in front matter (found ${detail})`);
    this.name = 'YamlAliasRefusedError';
  }
}

/** Parses one front matter block; throws a YamlAliasRefusedError or an Error naming line and column. */
export function parseFrontMatterYaml(source: string): unknown {
  const doc = parseDocument(source, { uniqueKeys: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new Error(problem.message);

  let found = '';
  visit(doc, (_key, node) => {
    if (isAlias(node)) found = `alias *${node.source.slice(0, 40)}`;
    else if (isNode(node) && node.anchor) found = `anchor &${node.anchor.slice(0, 40)}`;
    return found ? visit.BREAK : undefined;
  });
  if (found) throw new YamlAliasRefusedError(found);
  return doc.toJS();
}
