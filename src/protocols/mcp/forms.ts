/**
 * Steward's waits as MCP elicitation forms. A wait is asked as the AG-UI interrupts of
 * `src/protocols/ag-ui/interrupts.ts` (one, or one per item of a fan-out) and each interrupt
 * becomes one form, keyed by the interrupt's id. A form is the interrupt's `responseSchema`
 * — the JSON Schema AG-UI and A2A publish, made from the zod schemas the user events are
 * checked with — made flat, since an elicitation form holds only strings, numbers, booleans
 * and enums: a nested object's fields become `parent.field`, an artifact's edits one text
 * field per tag (its body as the default), a tool call's arguments one JSON text field. What
 * the person fills in is made back into the interrupt's answer and checked by `eventForAnswer`,
 * as an AG-UI resume or an A2A data part is: one schema, one check, for every protocol.
 *
 * A tool_input wait is the exception: the call's own MCP server asked its questions with its
 * own forms, so they go to the host as they came (a form, or a URL to visit), one per key.
 */
import { inputRequired, type InputRequest, type PrimitiveSchemaDefinition } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Interrupt } from '@ag-ui/core';
import type { SessionView } from '../../core/view.js';
import { waitTermsLines } from '../../core/wait-terms.js';
import { callsOfWait } from '../../core/tools/server-tools.js';
import { interruptsFor } from '../ag-ui/interrupts.js';
import { withInterruptTarget } from '../ag-ui/interrupt-ids.js';
import { ownRecord, ownValue, setOwn } from '../../core/blackboard/keyed.js';

/** What a host answers to one form (an elicitation result), as far as Steward reads it; a field may be named "__proto__" (a tag). */
export const FormResponse = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: ownRecord(z.string(), z.unknown()).optional(),
});
export type FormResponse = z.infer<typeof FormResponse>;

/**
 * An artifact's body shown in a form's message, and as its edit field's default, at most. A longer
 * one is cut in the message, and its field starts empty (left empty: unchanged): a host sends a
 * form's fields back whole, and every body of a fan-in at full length would not fit a request.
 */
const BODY_IN_MESSAGE_CHARS = 4000;

type JsonSchema = Record<string, unknown>;

/** How a field's value goes back into the answer. */
type FieldKind =
  /** As it is, under `path`. */
  | { kind: 'value'; path: string[] }
  /** A `const: true` flag (confirm, skip): only `true` says it. */
  | { kind: 'flag'; path: string[] }
  /** JSON text of an object (a tool call's arguments): parsed; its default (the call's own) says nothing. */
  | { kind: 'json'; path: string[]; unchanged: string }
  /** An edited body of one tag: only a changed one is an edit. */
  | { kind: 'edit'; path: string[]; unchanged: string };

interface Field {
  schema: PrimitiveSchemaDefinition;
  back: FieldKind;
}

/** One form: the elicitation to send, and how its accepted content becomes the interrupt's answer. */
export interface WaitForm {
  /** The interrupt it asks (its id is the form's key). */
  interruptId: string;
  request: InputRequest;
  /** The answer the content stands for (checked by `eventForAnswer` next), or why it cannot be one. */
  answerOf(content: Record<string, unknown>): { ok: true; payload: unknown } | { ok: false; message: string };
}

/** The keys a primitive field of an elicitation form may have (the protocol's restricted schema). */
const PRIMITIVE_KEYS = ['type', 'description', 'enum', 'minLength', 'maxLength', 'minimum', 'maximum', 'format'] as const;

/** A primitive property of the answer schema as a form field, or null when it is not one. */
function primitive(prop: JsonSchema, title: string): PrimitiveSchemaDefinition | null {
  const type = prop.type;
  if (type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean') return null;
  const picked: JsonSchema = { title };
  for (const key of PRIMITIVE_KEYS) if (prop[key] !== undefined) picked[key] = prop[key];
  return picked as PrimitiveSchemaDefinition;
}

/** The properties of an answer schema, every variant's of a union (a wait that takes text, or a confirmation, …). */
function variantsOf(schema: JsonSchema): JsonSchema[] {
  const anyOf = schema.anyOf;
  return Array.isArray(anyOf) ? (anyOf as JsonSchema[]) : [schema];
}

/** The fields that name what an answer is for: the interrupt's id names it. */
const TARGET_FIELDS = new Set(['callId', 'item', 'artifactId']);

/** The task of the step an approval asks about: the item's in a fan-out, else the pending step's. */
function stepTaskOf(view: SessionView, interrupt: Interrupt): string | undefined {
  const item = view.team?.find((i) => i.item === interrupt.toolCallId && i.status === 'proposed');
  return item ? item.reason : view.pendingStep?.reason;
}

/** The artifact an interrupt asks about, when it asks about one: the item's in a fan-in, else the one under review. */
function artifactOfInterrupt(view: SessionView, interrupt: Interrupt) {
  const item = (interrupt.metadata as { steward?: { artifactId?: unknown } } | undefined)?.steward?.artifactId;
  if (typeof item === 'string') return view.team?.find((i) => i.artifact?.id === item)?.artifact;
  return view.artifact;
}

/**
 * The fields of one interrupt's form, by key: its answer schema made flat. A nested object's
 * fields are `parent.field`; `edits` becomes one field per tag of the artifact (its body the
 * default); a tool call's `arguments` one JSON text field (the call's own the default); the
 * call or item the answer is for, none (the interrupt's id names it).
 */
function fieldsOf(view: SessionView, interrupt: Interrupt): { fields: Map<string, Field>; required: string[] } {
  const fields = new Map<string, Field>();
  const required = new Set<string>();
  const variants = variantsOf(interrupt.responseSchema as JsonSchema);
  const asked = (view.questions ?? view.artifact?.questions ?? []).length > 0;
  for (const variant of variants) {
    const props = (variant.properties ?? {}) as Record<string, JsonSchema>;
    // Answering or skipping questions is an answer only while some were asked.
    if (!asked && (props.answers !== undefined || props.skip !== undefined)) continue;
    if (variants.length === 1) for (const name of (variant.required as string[] | undefined) ?? []) required.add(name);
    for (const [name, prop] of Object.entries(props)) {
      const describe = typeof prop.description === 'string' ? prop.description : name;
      // The call or item the interrupt is for: its id names it (an answer never decides another than the one shown).
      if (TARGET_FIELDS.has(name)) continue;
      if (prop.const !== undefined && prop.const !== true) continue;
      // Approving, the reason is the worker's task: shown as it stands, and only a changed one is an edit.
      const task = name === 'reason' && view.waitingReason === 'approve_step' ? stepTaskOf(view, interrupt) : undefined;
      if (task !== undefined) {
        fields.set(name, {
          schema: { type: 'string', title: "approved: the worker's task (edit it to change the task); rejected: why (the manager reads it)", default: task },
          back: { kind: 'edit', path: [name], unchanged: task },
        });
        continue;
      }
      if (prop.const === true) {
        fields.set(name, { schema: { type: 'boolean', title: describe }, back: { kind: 'flag', path: [name] } });
        continue;
      }
      const field = primitive(prop, describe);
      if (field) {
        fields.set(name, { schema: field, back: { kind: 'value', path: [name] } });
        continue;
      }
      if (prop.type !== 'object') continue;
      const inner = prop.properties as Record<string, JsonSchema> | undefined;
      if (inner) {
        for (const [key, sub] of Object.entries(inner)) {
          const subField = primitive(sub, typeof sub.description === 'string' ? sub.description : key);
          if (subField) fields.set(`${name}.${key}`, { schema: subField, back: { kind: 'value', path: [name, key] } });
        }
        continue;
      }
      if (name === 'edits') {
        for (const tag of artifactOfInterrupt(view, interrupt)?.tags ?? []) {
          const shown = tag.body.length <= BODY_IN_MESSAGE_CHARS;
          fields.set(`edits.${tag.tag}`, {
            schema: shown
              ? { type: 'string', title: `${tag.tag} (accepted: edit it to accept your version)`, default: tag.body }
              : { type: 'string', title: `${tag.tag} (accepted: your whole version, to accept it instead; left empty: as it is)` },
            back: { kind: 'edit', path: ['edits', tag.tag], unchanged: tag.body },
          });
        }
        continue;
      }
      // Any other object without fixed properties is a tool call's arguments: JSON text, the call's own the default.
      if (name !== 'arguments') continue;
      const call = callsOfWait(view.toolCalls, view.waitingReason).find((c) => c.callId === interrupt.toolCallId);
      const unchanged = call ? JSON.stringify(call.arguments) : '';
      fields.set(name, {
        schema: { type: 'string', title: `${describe} (JSON)`, ...(unchanged ? { default: unchanged } : {}) },
        back: { kind: 'json', path: [name], unchanged },
      });
    }
  }
  return { fields, required: [...required].filter((n) => fields.has(n)) };
}

/** `value` at `path` of `into`, as own properties all the way (a tag may be named "__proto__"). */
function put(into: Record<string, unknown>, path: string[], value: unknown): void {
  let at = into;
  for (const key of path.slice(0, -1)) {
    if (ownValue(at, key) === undefined) setOwn(at, key, {});
    at = ownValue(at, key) as Record<string, unknown>;
  }
  setOwn(at, path[path.length - 1]!, value);
}

/** The answer a form's content stands for: each field put back where the answer schema has it. */
function answerFrom(fields: Map<string, Field>, content: Record<string, unknown>): { ok: true; payload: unknown } | { ok: false; message: string } {
  const payload: Record<string, unknown> = {};
  for (const [key, { back }] of fields) {
    const value = ownValue(content, key);
    // A host sends an empty text for a field left blank: nothing said.
    if (value === undefined || value === null || value === '') continue;
    if (back.kind === 'flag') {
      if (value === true) put(payload, back.path, true);
      continue;
    }
    if (back.kind === 'edit' || back.kind === 'json') {
      if (value === back.unchanged) continue;
      if (back.kind === 'edit') {
        put(payload, back.path, value);
        continue;
      }
      try {
        put(payload, back.path, JSON.parse(String(value)));
      } catch {
        return { ok: false, message: `The field "${key}" must hold JSON (an object), as its default does.` };
      }
      continue;
    }
    put(payload, back.path, value);
  }
  return { ok: true, payload };
}

/** The form's message: the interrupt's prompt, what it asks about (an artifact's bodies), and the wait's terms. */
function messageOf(view: SessionView, interrupt: Interrupt): string {
  const lines = [interrupt.message ?? ''];
  if (view.waitingReason === 'review_artifact') {
    for (const tag of artifactOfInterrupt(view, interrupt)?.tags ?? []) {
      const body = tag.body.length > BODY_IN_MESSAGE_CHARS ? `${tag.body.slice(0, BODY_IN_MESSAGE_CHARS)}…` : tag.body;
      lines.push('', `[${tag.tag} v${tag.version}]`, body);
    }
  }
  const questions = view.questions ?? view.artifact?.questions ?? [];
  if (view.waitingReason === 'worker_questions' || view.waitingReason === 'input') for (const q of questions) lines.push(`- ${q.id}: ${q.text}`);
  const terms = waitTermsLines(view);
  if (terms.length) lines.push('', ...terms);
  return lines.join('\n').trim();
}

/** The forms of a tool_input wait: what the call's server asked, one request per key, as it asked it. */
function toolInputForms(view: SessionView, interrupt: Interrupt): WaitForm[] {
  const call = callsOfWait(view.toolCalls, view.waitingReason)[0];
  const terms = waitTermsLines(view);
  const note = terms.length ? `\n\n${terms.join('\n')}` : '';
  return (call?.input?.requests ?? []).map((r) => ({
    interruptId: `${interrupt.id}:${r.key}`,
    request:
      r.mode === 'url'
        ? inputRequired.elicitUrl({ message: `${call!.server}.${call!.tool}: ${r.message}${note}`, url: r.url })
        : inputRequired.elicit({
            message: `${call!.server}.${call!.tool}: ${r.message}${note}`,
            requestedSchema: r.requestedSchema as Parameters<typeof inputRequired.elicit>[0]['requestedSchema'],
          }),
    answerOf: () => ({ ok: false, message: 'A tool server’s form is answered as a whole (toolInputAnswer).' }),
  }));
}

/**
 * The forms of the wait `view` is in, one per interrupt (a tool_input wait: one per request of
 * the call's server), in the order the interrupts come.
 *
 * @example
 * formsFor(view).map((f) => f.interruptId); // ['s1#w4/item/run_north', 's1#w4/item/run_south'] while two steps wait
 */
export function formsFor(view: SessionView): WaitForm[] {
  const interrupts = interruptsFor(view);
  if (view.waitingReason === 'tool_input') return toolInputForms(view, interrupts[0]!);
  return interrupts.map((interrupt) => {
    const { fields, required } = fieldsOf(view, interrupt);
    const requestedSchema = {
      type: 'object' as const,
      properties: Object.fromEntries([...fields].map(([key, f]) => [key, f.schema])),
      ...(required.length ? { required } : {}),
    };
    return {
      interruptId: interrupt.id,
      request: inputRequired.elicit({ message: messageOf(view, interrupt), requestedSchema }),
      answerOf: (content) => {
        const answer = answerFrom(fields, content);
        return answer.ok ? { ok: true, payload: withInterruptTarget(view.id, interrupt.id, answer.payload) } : answer;
      },
    };
  });
}

/**
 * The answer to a tool_input wait from the host's responses to its forms: every request's
 * response as the call's server takes it (a decline or a cancel is an answer too: the server
 * hears it), or the keys the host did not answer.
 *
 * @example
 * toolInputAnswer(view, responses); // { ok: true, payload: { callId: 'c1', responses: { confirm: { action: 'accept', content: { ok: true } } } } }
 */
export function toolInputAnswer(view: SessionView, responses: Map<string, FormResponse>): { ok: true; payload: unknown } | { ok: false; missing: string[] } {
  const interrupt = interruptsFor(view)[0]!;
  const call = callsOfWait(view.toolCalls, view.waitingReason)[0];
  const requests = call?.input?.requests ?? [];
  const missing = requests.map((r) => `${interrupt.id}:${r.key}`).filter((key) => !responses.has(key));
  if (missing.length) return { ok: false, missing };
  // Keyed by the server's own keys, built as own properties (a key may be "__proto__"); a URL request's answer has no content.
  const byKey = Object.fromEntries(
    requests.map((r) => {
      const { action, content } = responses.get(`${interrupt.id}:${r.key}`)!;
      return [r.key, r.mode === 'url' || content === undefined ? { action } : { action, content }];
    }),
  );
  return { ok: true, payload: { callId: call?.callId, responses: byKey } };
}
