/**
 * A bounded window of a conversation (the manager's or a worker's): the latest messages,
 * cut at group boundaries, and counters for what left it. The window in the context is the
 * compaction the prompt uses, so the context, the snapshot and the prompt all stay bounded
 * however long a session or a single turn runs. Every message ever appended is archived by
 * the runtime (src/runtime/archive.ts) before it can leave the window.
 *
 * A group is a user message, or an assistant message together with the tool results that
 * answer its calls. Cutting only between groups keeps the window valid for the API: every
 * tool call has its result and no result is an orphan.
 *
 * Pure and deterministic: plain data in, plain data out.
 */
import type { ChatMessage } from '../models/model.js';

export interface WindowLimits {
  /** At most this many messages stay in the window (more only when the latest group alone is larger). */
  messages: number;
  /** At most this many characters of content and tool-call arguments (a proxy of prompt bytes). */
  chars: number;
}

/**
 * The working memory of the current turns (the blackboard is the session's): 30 messages hold
 * a full burst at the default maxBurst (1 + 2 × 12) with the question it answers, or about the
 * current burst and the one before it; 32,000 characters (~8k tokens) are the token budget,
 * room for one burst's reads of real bodies. The reasoning: docs/design.md §5.
 */
export const DEFAULT_WINDOW: WindowLimits = { messages: 30, chars: 32_000 };

export interface Transcript {
  /** The window: the latest messages of the conversation, starting at a group boundary. */
  messages: ChatMessage[];
  /** Characters of `messages` (see messageSize). */
  chars: number;
  /** Messages ever appended to this transcript, across resets: the next message's number. */
  total: number;
  /** Messages of the current conversation (since the last reset) that left the window. */
  omitted: number;
}

export const EMPTY_TRANSCRIPT: Transcript = { messages: [], chars: 0, total: 0, omitted: 0 };

/** The transcripts of a new session. */
export function initialTranscripts(window: WindowLimits = DEFAULT_WINDOW) {
  return { manager: EMPTY_TRANSCRIPT, worker: EMPTY_TRANSCRIPT, window };
}

/** Checks limits given by an app: whole numbers ≥ 1 (a window must hold at least one group). */
export function windowLimitsProblem(limits: Partial<WindowLimits> | undefined): string | null {
  for (const key of ['messages', 'chars'] as const) {
    const n = limits?.[key];
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) return `window.${key} must be a whole number ≥ 1 (got ${String(n)})`;
  }
  return null;
}

/** The size a message counts for: its content and its tool calls' names, ids and arguments. */
export function messageSize(m: ChatMessage): number {
  let n = typeof m.content === 'string' ? m.content.length : 0;
  if (m.role === 'assistant' && m.tool_calls) {
    for (const c of m.tool_calls)
      n += (c.function?.name?.length ?? 0) + (typeof c.function?.arguments === 'string' ? c.function.arguments.length : 0) + (c.id?.length ?? 0);
  }
  return n;
}

/** A message that starts a group: everything but a tool result. */
const startsGroup = (m: ChatMessage) => m.role !== 'tool';

/**
 * Appends messages and cuts the oldest groups while the window is over its limits. Never
 * cuts into the group the new messages belong to (nor any group they start), so what one
 * transition appends is always still there when the transition ends — the runtime archives
 * it from there.
 */
export function appendToTranscript(t: Transcript, limits: WindowLimits, added: readonly ChatMessage[]): Transcript {
  if (added.length === 0) return t;
  const messages = [...t.messages, ...added];
  let chars = t.chars;
  for (const m of added) chars += messageSize(m);
  // The first message the new ones touch: the start of the group the first of them joins.
  let protectedFrom = t.messages.length;
  if (!startsGroup(added[0]!)) {
    protectedFrom = Math.max(0, t.messages.length - 1);
    while (protectedFrom > 0 && !startsGroup(messages[protectedFrom]!)) protectedFrom--;
  }
  let start = 0;
  let count = messages.length;
  while ((count > limits.messages || chars > limits.chars) && start < protectedFrom) {
    // Drop the group at `start`: its head, then its tool results.
    let end = start + 1;
    while (end < protectedFrom && !startsGroup(messages[end]!)) end++;
    for (let i = start; i < end; i++) chars -= messageSize(messages[i]!);
    count -= end - start;
    start = end;
  }
  return {
    messages: start === 0 ? messages : messages.slice(start),
    chars,
    total: t.total + added.length,
    omitted: t.omitted + start,
  };
}

/** A new conversation (a worker run starts): the window empties; the numbering goes on. */
export function resetTranscript(t: Transcript): Transcript {
  return t.messages.length === 0 && t.omitted === 0 ? t : { messages: [], chars: 0, total: t.total, omitted: 0 };
}

/** A window holding `messages` (migrating an older snapshot): cut to the limits like appends are. */
export function transcriptOf(messages: readonly ChatMessage[], limits: WindowLimits): Transcript {
  // One message at a time, so that older groups may be cut as they would have been.
  let t = EMPTY_TRANSCRIPT;
  for (const m of messages) t = appendToTranscript(t, limits, [m]);
  return t;
}

/** The number (0-based, across resets) of the window's first message. */
export function firstNumber(t: Transcript): number {
  return t.total - t.messages.length;
}

/** The note the prompt puts before a window that lost messages. */
export function omittedNote(t: Transcript, current: string): ChatMessage[] {
  return t.omitted > 0 ? [{ role: 'user', content: `(${t.omitted} earlier messages are omitted to keep this prompt short; ${current})` }] : [];
}
