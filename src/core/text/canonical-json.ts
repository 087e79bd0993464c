/**
 * JSON with every object's keys sorted and no whitespace: one text per value, whatever the
 * order its keys were written in. Browser-safe (the chart uses it), and written here rather
 * than taken from a library: what it is given is JSON data (a package's content, a user
 * event), for which sorted keys are the whole of canonical JSON (RFC 8785's number rules
 * never apply), and a hash of it must not change with a dependency's update.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, 'x'] }); // '{"a":[true,"x"],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const record = value as Record<string, unknown>;
    return `{${keys
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
