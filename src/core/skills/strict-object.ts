/**
 * The strict objects of the package format (manifest, front matter, mcpServers): an unknown
 * key is usually a typo ("outputTag"), and the list of valid keys is the fastest fix, so the
 * error names them.
 */
import * as z from 'zod';

/** A strict object whose errors say which keys are allowed; any other problem is "must be `what`". */
export function strict<S extends z.core.$ZodLooseShape>(shape: S, what: string) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `has unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}: remove it or fix the spelling (allowed fields: ${allowed})`
        : `must be ${what}`,
  });
}
