/**
 * Records keyed by names a model, a package or a user chose (tags above all). Such a name
 * may be "__proto__", "constructor" or "toString", so these records are read only through
 * `ownValue` (never `record[name]`, which walks the prototype chain and finds `Object` for
 * "constructor"), and are written with computed keys or `Object.fromEntries`, which create
 * own properties even for "__proto__". They stay plain objects, not Maps: the session
 * context is persisted as JSON, and JSON.stringify / JSON.parse keep an own "__proto__" key.
 */
import * as z from 'zod';

/** `record[key]` if `key` is the record's own property, else undefined. */
export function ownValue<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Sets `record[key]` as an own, enumerable property, "__proto__" too (a plain assignment would set the prototype instead). */
export function setOwn<V>(record: Record<string, V>, key: string, value: NoInfer<V>): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An object that is not null and not an array: what a JSON object parses to. */
export const isPlainRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * JSON Schemas to show for `ownRecord` schemas, keyed by the schema's final transform:
 * `.refine()` and `.describe()` clone the pipe with a new definition but keep its parts.
 */
const shownAs = new WeakMap<object, z.ZodType>();

/**
 * A zod record that keeps and checks every own key. `z.record` silently drops a "__proto__"
 * key without checking its value, which would lose a tag named so, or let an unchecked value
 * through to code that reads the raw object. Validated as a Map, returned as a plain object
 * built with `Object.fromEntries`.
 */
export function ownRecord<K extends z.ZodType<string>, V extends z.ZodType>(key: K, value: V, options: { error?: string } = {}) {
  const schema = z
    .preprocess(
      (input) => (isPlainRecord(input) ? new Map(Object.entries(input)) : input),
      z.map(key, value, options.error ? { error: options.error } : undefined),
    )
    .transform((entries) => Object.fromEntries(entries) as Record<z.output<K>, z.output<V>>);
  shownAs.set(schema._zod.def.out, z.record(key, value));
  // The same JSON Schema as metadata, for generators that read zod's metadata and cannot
  // render a Map (the OpenAPI document of `steward serve`, src/http/route.ts).
  const { $schema: _dialect, ...shown } = z.toJSONSchema(z.record(key, value), { unrepresentable: 'any' }) as Record<string, unknown>;
  return schema.meta(shown);
}

/**
 * For `z.toJSONSchema(schema, { unrepresentable: 'any', override: ownRecordJsonSchema })`:
 * an `ownRecord` is shown as the JSON object it reads, as `z.record` would be.
 */
export function ownRecordJsonSchema(ctx: { zodSchema: { _zod: { def: object } }; jsonSchema: Record<string, unknown> }): void {
  const out = (ctx.zodSchema._zod.def as { out?: unknown }).out;
  const shown = typeof out === 'object' && out !== null ? shownAs.get(out) : undefined;
  if (!shown) return;
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(shown) as Record<string, unknown>;
  Object.assign(ctx.jsonSchema, jsonSchema);
}
