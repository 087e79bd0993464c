/**
 * The form an MCP server asks a person to fill during a tool call (elicitation's
 * `requestedSchema`), read into fields a UI asks for one by one: the CLI's prompts and the
 * inspector's form share this reading. MCP keeps such a schema flat: each property a string
 * (perhaps a choice), a number, an integer, a boolean, or an array of choices (several may be
 * picked). A property outside that is asked as plain text. The runtime checks every answer
 * against the schema itself (the MCP SDK's validator), so what is read here only guides the
 * person; it never decides what is valid.
 * Everything here came from a server: titles, descriptions and choices are data to show (made
 * safe by the caller), never markup or terminal control.
 */
import * as z from 'zod';

/** How a field is asked: yes/no, a number, a whole number, one choice, several choices, or text. */
type FieldKind = 'boolean' | 'number' | 'integer' | 'choice' | 'choices' | 'text';

export interface FormField {
  /** The property's name: the key of its value in the answer's content. */
  name: string;
  kind: FieldKind;
  required: boolean;
  title?: string;
  description?: string;
  /** A choice's or choices' values, and how each is shown (the server's title, else the value). */
  choices?: { value: string; label: string }[];
  /** The server's default, when it is of the field's kind. */
  default?: string | number | boolean | string[];
  /** What else the schema asks of the value, in words ("at least 2 characters", "an email address"). */
  rules: string[];
}

/** A value fit for a field, or what is wrong with the text typed for it. */
type FieldValue = { value: string | number | boolean | string[] | undefined } | { problem: string };

const described = { title: z.string().optional(), description: z.string().optional() };
const titledChoice = z.object({ const: z.string(), title: z.string().optional() });
const count = z.number().int().nonnegative().optional();

const StringProperty = z.object({
  type: z.literal('string'),
  ...described,
  enum: z.array(z.string()).optional(),
  enumNames: z.array(z.string()).optional(),
  oneOf: z.array(titledChoice).optional(),
  minLength: count,
  maxLength: count,
  format: z.string().optional(),
  default: z.string().optional(),
});
const NumberProperty = z.object({
  type: z.enum(['number', 'integer']),
  ...described,
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
});
const BooleanProperty = z.object({ type: z.literal('boolean'), ...described, default: z.boolean().optional() });
const ArrayProperty = z.object({
  type: z.literal('array'),
  ...described,
  items: z.union([z.object({ enum: z.array(z.string()) }), z.object({ anyOf: z.array(titledChoice) })]),
  minItems: count,
  maxItems: count,
  default: z.array(z.string()).optional(),
});
const Property = z.discriminatedUnion('type', [StringProperty, NumberProperty, BooleanProperty, ArrayProperty]);
const RequestedSchema = z.object({ properties: z.record(z.string(), z.unknown()).optional(), required: z.array(z.string()).optional() });

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  email: 'an email address',
  uri: 'a web address (URI)',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (ISO 8601)',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function choicesOf(property: z.infer<typeof StringProperty>): { value: string; label: string }[] | undefined {
  if (property.oneOf) return property.oneOf.map((c) => ({ value: c.const, label: c.title ?? c.const }));
  return property.enum?.map((value, i) => ({ value, label: property.enumNames?.[i] ?? value }));
}

function fieldOf(name: string, raw: unknown, required: boolean): FormField {
  const parsed = Property.safeParse(raw);
  if (!parsed.success) {
    // Not one of MCP's kinds: asked as text, with what the server says of it; the runtime's check decides.
    const loose = z.object(described).safeParse(raw);
    return { name, kind: 'text', required, ...(loose.success ? loose.data : {}), rules: [] };
  }
  const property = parsed.data;
  const base = {
    name,
    required,
    ...(property.title !== undefined ? { title: property.title } : {}),
    ...(property.description !== undefined ? { description: property.description } : {}),
  };
  const withDefault = property.default !== undefined ? { default: property.default } : {};
  switch (property.type) {
    case 'boolean':
      return { ...base, kind: 'boolean', ...withDefault, rules: [] };
    case 'number':
    case 'integer': {
      const rules = [property.minimum !== undefined ? `at least ${property.minimum}` : '', property.maximum !== undefined ? `at most ${property.maximum}` : ''];
      return { ...base, kind: property.type, ...withDefault, rules: rules.filter(Boolean) };
    }
    case 'array': {
      const items = property.items;
      const choices =
        'enum' in items ? items.enum.map((value) => ({ value, label: value })) : items.anyOf.map((c) => ({ value: c.const, label: c.title ?? c.const }));
      const rules = [property.minItems ? `pick at least ${property.minItems}` : '', property.maxItems !== undefined ? `pick at most ${property.maxItems}` : ''];
      return { ...base, kind: 'choices', choices, ...withDefault, rules: rules.filter(Boolean) };
    }
    case 'string': {
      const choices = choicesOf(property);
      if (choices) return { ...base, kind: 'choice', choices, ...withDefault, rules: [] };
      const rules = [
        property.minLength ? `at least ${plural(property.minLength, 'character')}` : '',
        property.maxLength !== undefined ? `at most ${plural(property.maxLength, 'character')}` : '',
        property.format ? (FORMAT_WORDS[property.format] ?? `format ${property.format}`) : '',
      ];
      return { ...base, kind: 'text', ...withDefault, rules: rules.filter(Boolean) };
    }
  }
}

/**
 * The fields of a server's form, in the order its schema lists them.
 *
 * @example
 * formFields({ type: 'object', properties: { ok: { type: 'boolean', title: 'Go on?' } }, required: ['ok'] });
 * // [{ name: 'ok', kind: 'boolean', required: true, title: 'Go on?', rules: [] }]
 */
export function formFields(requestedSchema: Record<string, unknown>): FormField[] {
  const parsed = RequestedSchema.safeParse(requestedSchema);
  if (!parsed.success) return [];
  const required = new Set(parsed.data.required ?? []);
  return Object.entries(parsed.data.properties ?? {}).map(([name, property]) => fieldOf(name, property, required.has(name)));
}

/**
 * The value for a field from the text a person typed: a number for a number field, the text
 * otherwise; empty text leaves an optional field out (value undefined) and is refused for a
 * required one. Booleans and choices are picked, not typed.
 */
export function typedValue(field: FormField, text: string): FieldValue {
  const trimmed = text.trim();
  if (trimmed === '') return field.required ? { problem: 'This field is required.' } : { value: undefined };
  if (field.kind !== 'number' && field.kind !== 'integer') return { value: text };
  const value = Number(trimmed);
  if (!Number.isFinite(value)) return { problem: `Type a number${field.kind === 'integer' ? ' (a whole one)' : ''}.` };
  if (field.kind === 'integer' && !Number.isInteger(value)) return { problem: 'Type a whole number.' };
  return { value };
}

/**
 * The domain of a page a server asks a person to visit, as the browser will reach it: the
 * host after any `user@` part, in its ASCII form (a look-alike letter shows as `xn--…`). This is
 * what a person checks before they open the link; undefined when it is not a web address.
 */
export function urlDomain(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.hostname : undefined;
  } catch {
    return undefined;
  }
}
