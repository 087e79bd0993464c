/**
 * Turns a model reply into an assistant message whose tool calls the machine checks one by
 * one. The JSON replies the tool contract keeps (docs/design.md "The contract's JSON replies")
 * end up as ordinary tool calls too, so everything downstream (and every saved transcript) sees one shape:
 * - the manager's one-shot JSON decision `{"tool": "run_worker", "arguments": {…}}`;
 * - the workers' JSON reply `{"outputs": {…}, "askUser": [...]}`;
 * - plain manager text, which is shown to the user as `ask_user`.
 */
import type { AssistantMessage, ChatMessage, ModelReply, ToolCall } from '../models/model.js';
import type { ToolActor } from './schemas.js';

/** A tool call with its arguments parsed once (rules 2–5 all read them). */
export interface QueuedCall {
  call: ToolCall;
  args: unknown;
  /** Set when `arguments` is not valid JSON; `args` is then undefined. */
  parseError?: string;
}

export interface NormalizedReply {
  message: AssistantMessage;
  queue: QueuedCall[];
}

/**
 * Deepest nesting a reply's JSON may have. JSON.parse itself copes with any depth, but what
 * runs on the parsed value afterwards recurses (JSON.stringify of the snapshot and of
 * synthetic calls, zod, structuredClone): 100,000 nested arrays overflowed the stack there.
 * No tool argument of the contract nests deeper than 3.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` nests brackets deeper than `max` (outside strings); one linear pass. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const tooDeep = `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;

export function parseCall(call: ToolCall): QueuedCall {
  const raw: unknown = call.function?.arguments;
  // A model (or a server) may send something that is not a string: refuse it by rule 2 like
  // malformed JSON, never crash the session over it.
  if (typeof raw !== 'string') return { call, args: undefined, parseError: `arguments must be a JSON string, got ${raw === null ? 'null' : typeof raw}` };
  if (raw.trim() === '') return { call, args: {} };
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) return { call, args: undefined, parseError: tooDeep };
  try {
    return { call, args: JSON.parse(raw) as unknown };
  } catch (error) {
    return { call, args: undefined, parseError: (error as Error).message };
  }
}

function syntheticCall(id: string, name: string, args: unknown): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args ?? {}) } };
}

const FENCE = '```';

/**
 * The body of a reply that is one fenced block (```json … ``` or ``` … ```), else the reply.
 * Plain string operations, each linear in the reply's length: model text is hostile input,
 * and the regex this replaces (`^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$`) backtracked
 * cubically on an unclosed fence followed by whitespace, blocking the process. The fence
 * must open at the start and close at the very end, as the regex required.
 */
function unfenced(content: string): string {
  const text = content.trim();
  if (text.length < 2 * FENCE.length || !text.startsWith(FENCE) || !text.endsWith(FENCE)) return text;
  const inner = text.slice(FENCE.length, -FENCE.length);
  return (inner.slice(0, 4).toLowerCase() === 'json' ? inner.slice(4) : inner).trim();
}

/** JSON in the content, bare or fenced as ```json … ```; undefined when it is not an object. */
export function jsonObjectIn(content: string): Record<string, unknown> | undefined {
  const text = unfenced(content);
  if (!text.startsWith('{') || nestsDeeperThan(text, MAX_JSON_DEPTH)) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function jsonDecisionCalls(content: string, idBase: string): ToolCall[] | undefined {
  const json = jsonObjectIn(content);
  if (!json) return undefined;
  const name = json.tool ?? json.name ?? json.action;
  if (typeof name !== 'string') return undefined;
  return [syntheticCall(`${idBase}_0`, name, json.arguments ?? json.args ?? json.params ?? {})];
}

function jsonWorkerReplyCalls(content: string, idBase: string): ToolCall[] | undefined {
  const json = jsonObjectIn(content);
  if (!json || (json.outputs === undefined && json.askUser === undefined)) return undefined;
  const calls: ToolCall[] = [];
  if (json.outputs !== undefined) calls.push(syntheticCall(`${idBase}_0`, 'submit', { outputs: json.outputs }));
  if (json.askUser !== undefined) {
    const ask = json.askUser as unknown;
    const questions = Array.isArray(ask) ? ask : typeof ask === 'string' ? (ask.trim() ? [ask] : []) : (ask as { questions?: unknown })?.questions;
    // Workers that answer in JSON write `"askUser": []` (or null, or "") for "no questions": that is not a call.
    const none = questions === undefined || questions === null || (Array.isArray(questions) && questions.length === 0);
    if (!none || calls.length === 0) calls.push(syntheticCall(`${idBase}_1`, 'ask_user', { questions }));
  }
  return calls;
}

/**
 * Every tool call needs exactly one result, matched by id: an id that is missing, repeated
 * within the reply, or already used earlier in the transcript (`used`) is renamed, so a
 * result can only ever match one call.
 */
/**
 * An id a person can name back: a decision names a call (a fan-out's item, a tool call) by it,
 * and the events' schemas take at most 200 characters with no space around them.
 */
const nameableId = (id: unknown): id is string => typeof id === 'string' && id !== '' && id.length <= MAX_CALL_ID_CHARS && id.trim() === id;
export const MAX_CALL_ID_CHARS = 200;

function withUniqueIds(calls: ToolCall[], idBase: string, used: UsedIds): ToolCall[] {
  // The common reply (one call, a fresh id) allocates nothing here.
  if (calls.length === 1 && nameableId(calls[0]!.id) && !used.has(calls[0]!.id)) return calls;
  const seen = new Set<string>();
  let renamed = false;
  const taken = (id: string) => seen.has(id) || used.has(id);
  const unique = calls.map((c, i) => {
    if (nameableId(c.id) && !taken(c.id)) {
      seen.add(c.id);
      return c;
    }
    renamed = true;
    let id = `${idBase}_dup${i}`;
    for (let n = 2; taken(id); n++) id = `${idBase}_dup${i}_${n}`;
    seen.add(id);
    return { ...c, id };
  });
  return renamed ? unique : calls;
}

/** Call ids already taken: a Set, or `toolCallIds` of a transcript. */
export interface UsedIds {
  has(id: string): boolean;
}

/**
 * The tool call ids of a transcript, for `normalizeReply`'s `usedIds`: looked up in the
 * messages when asked (a reply has a call or two; a Set of the whole window per reply cost more).
 */
export function toolCallIds(messages: readonly ChatMessage[]): UsedIds {
  return {
    has(id) {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]!;
        if (m.role === 'assistant' && m.tool_calls) for (const c of m.tool_calls) if (c.id === id) return true;
      }
      return false;
    },
  };
}

const validCall = (c: ToolCall) => c && typeof c.function?.name === 'string';

/**
 * @param idBase unique within the session (e.g. "fallback_12"), used for synthetic call ids.
 * @param usedIds call ids the transcript already holds: a model that repeats one gets it renamed.
 */
export function normalizeReply(actor: ToolActor, raw: ModelReply, idBase: string, usedIds: UsedIds = new Set()): NormalizedReply {
  // A Model implementation (an app's own, say) may hand back something off-shape: treat what
  // is not there as absent rather than crash the session over it.
  const content = typeof raw?.content === 'string' ? raw.content : null;
  const given = Array.isArray(raw?.toolCalls) ? raw.toolCalls : [];
  // A copy either way: the context must not share an array the Model may reuse or mutate.
  let calls = given.every(validCall) ? given.slice() : given.filter(validCall);
  if (calls.length === 0 && content && content.trim() !== '') {
    const fromJson = actor === 'manager' ? jsonDecisionCalls(content, idBase) : jsonWorkerReplyCalls(content, idBase);
    calls = fromJson ?? (actor === 'manager' ? [syntheticCall(`${idBase}_0`, 'ask_user', { message: content.trim() })] : []);
  }
  calls = withUniqueIds(calls, idBase, usedIds);
  const message: AssistantMessage = calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content: content ?? '' };
  return { message, queue: calls.map(parseCall) };
}
