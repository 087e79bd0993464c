/**
 * A worker's MCP tool calls as chat messages (AG-UI MESSAGES_SNAPSHOT): each call with its
 * arguments, and its result once it has one. A person approves, rejects, answers and settles
 * these calls (their interrupts name them by `toolCallId`), so a client finds them in the
 * messages like the manager's run_worker calls. The rest of the worker's conversation (its
 * words, its blackboard reads, submit) is the worker's own and stays out, as the manager's
 * loop does.
 *
 * The calls are those of the worker conversation the context holds (its window; a new worker
 * run, a revision included, starts a new one). They go where they happened in the manager's
 * chat: while that worker run lasts, after everything the manager said; once it ended, just
 * before the note the chart wrote the manager about its end (an accepted artifact, a worker
 * that stopped), the first thing the manager heard after it.
 */
import type { Message } from '@ag-ui/core';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { WaitingReason } from '../../core/machines/stream-events.js';
import type { ChatMessage } from '../../core/models/model.js';

/** The notes the chart writes the manager when a worker run ends (src/core/machines/session.updates.ts). */
export const WORKER_RUN_ENDED: readonly RegExp[] = [
  /^The user accepted artifact \S+ from \S+ \([^)]*\)\.[\s\S]* Plan the next step\.$/,
  /^The worker \S* (used all \d+ rounds without submitting; its step ended\.|failed: [\s\S]*|stopped before submitting: [\s\S]*; its step ended\.) Decide with the user how to go on\.$/,
];

/**
 * The worker's MCP calls and their results, with ids from the worker's message numbers
 * (`messageId(sessionId, 'worker', n)`: they never repeat, across worker runs too).
 */
export function workerCallMessages(context: SessionContext, id: (n: number) => string): Message[] {
  const { messages, total } = context.transcripts.worker;
  const first = total - messages.length;
  const mcpTools = new Set((context.package?.pinnedTools ?? []).map((p) => p.modelName));
  const kept = new Set<string>();
  return messages.flatMap((m: ChatMessage, i): Message[] => {
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).filter((c) => mcpTools.has(c.function.name));
      for (const c of calls) kept.add(c.id);
      if (calls.length === 0) return [];
      const toolCalls = calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } }));
      return [{ id: id(first + i), role: 'assistant', toolCalls }];
    }
    if (m.role === 'tool' && kept.has(m.tool_call_id)) return [{ id: id(first + i), role: 'tool', toolCallId: m.tool_call_id, content: String(m.content) }];
    return [];
  });
}

/**
 * Where the worker's calls go among the manager's messages (`manager`, the transcript's
 * window): at the end while the worker run lasts, else at the latest note of a run's end (the
 * run the worker conversation holds ended last), or nowhere when that note left the window
 * (the calls are older than the window then). A step under way is `context.step`; at
 * approve_step the step is only proposed, and the conversation is the previous run's.
 */
export function workerCallsPlace(context: SessionContext, manager: readonly ChatMessage[], waitingReason: WaitingReason | undefined): number | null {
  if (context.step !== null && waitingReason !== 'approve_step') return manager.length;
  const ended = manager.findLastIndex((m) => m.role === 'user' && WORKER_RUN_ENDED.some((note) => note.test(m.content)));
  return ended < 0 ? null : ended;
}
