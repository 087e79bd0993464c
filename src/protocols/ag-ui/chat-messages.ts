/**
 * The manager's conversation as a chat (AG-UI MESSAGES_SNAPSHOT): what the person said and
 * what the agents said to them. The transcript holds more, written for the model: the chart's
 * notes to the manager about the person's decisions ("The user accepted artifact a2 … Plan the
 * next step.") in the user role, nudges, and the tool calls of the manager's loop with their
 * results. A chat client would show those notes as messages the person typed, so they stay
 * out; the manager's words, what its boundary tools told the person (ask_user's message and
 * questions, review_blackboard's message, finish's summary) and the person's own texts stay.
 * Accepted run_worker calls stay too, with their results: an approval interrupt names one
 * (`toolCallId`), and a client looks it up in the messages. So do a worker's MCP tool calls,
 * which a person decides too (worker-calls.ts).
 */
import type { Message } from '@ag-ui/core';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { WaitingReason } from '../../core/machines/stream-events.js';
import type { ChatMessage, ToolCall } from '../../core/models/model.js';
import { REQUEST_TAG } from '../../core/skills/package-schema.js';
import { WORKER_RUN_ENDED, workerCallMessages, workerCallsPlace } from './worker-calls.js';

/**
 * The user-role messages the chart writes itself (src/core/machines/session.updates.ts), whole: a
 * person's text is taken for a note only if it is one of these from its first character to its
 * last, so a request that starts "The user …" stays the person's.
 */
const NOTES: readonly RegExp[] = [
  /^The user confirmed the request as it stands: plan the work\.$/,
  /^The user skipped your questions: go on with your best judgement\.$/,
  /^The user rejected the proposed step run_worker\([^)]*\)(: [\s\S]*| without giving a reason\.)$/,
  /^The user( \([^)]*\))? approved your run_worker\([^)]*\) with edits: [\s\S]*\. The worker runs with the edited step; you will hear when the user has reviewed its artifact\.$/,
  ...WORKER_RUN_ENDED,
  /^Correction: [\s\S]*$/,
  /^Reply by calling one of your tools\.$/,
];

/** The note that carries the person's answers to the manager's questions: the answers are theirs. */
const ANSWERS = /^The user answered your questions:\n([\s\S]+)$/;

/** The results the chart gives an accepted boundary tool: the person was shown what the call says. */
const SHOWN: Record<string, string> = {
  ask_user: 'Shown to the user; their reply follows.',
  review_blackboard: 'The overview is shown to the user; their reply follows.',
  finish: 'The session is finished.',
};

/** The id of message number `n` of an agent's conversation (numbers never repeat: `Transcript.total`). */
export function messageId(sessionId: string, agent: string, n: number): string {
  return `${sessionId}:${agent}:${n}`;
}

/**
 * The manager's conversation (the window the context keeps) as a chat, with ids that stay the
 * same from run to run: the person's texts (role user), the manager's words and what its tools
 * told the person (role assistant), the accepted run_worker calls with their results, and the
 * worker's MCP calls with theirs where they happened. `waitingReason`: the session's wait, if
 * it waits (at approve_step the worker conversation the context holds is the previous run's).
 *
 * @example
 * const messages = messagesOf(snapshot.context, view.waitingReason);
 * messages.filter((m) => m.role === 'user').map((m) => m.content); // ['A story about a lighthouse keeper.']
 */
export function messagesOf(context: SessionContext, waitingReason?: WaitingReason): Message[] {
  const { messages, total } = context.transcripts.manager;
  const chat = managerMessages(context, messages, total - messages.length);
  const place = workerCallsPlace(context, messages, waitingReason);
  if (place === null) return chat.flat();
  const worker = workerCallMessages(context, (n) => messageId(context.sessionId, 'worker', n));
  return [...chat.slice(0, place), worker, ...chat.slice(place)].flat();
}

/** The chat's messages of each message of the manager's window, in its order (none for a note, a nudge, a loop call). */
function managerMessages(context: SessionContext, messages: readonly ChatMessage[], first: number): Message[][] {
  const results = new Map(messages.flatMap((m) => (m.role === 'tool' ? [[m.tool_call_id, m.content] as const] : [])));
  // The request's versions still held are the person's words verbatim, whatever they say.
  const requests = new Set((context.blackboard[REQUEST_TAG] ?? []).flatMap((slot) => ('body' in slot ? [slot.body] : [])));
  const kept = new Set<string>();
  return messages.map((m: ChatMessage, i): Message[] => {
    const id = messageId(context.sessionId, 'manager', first + i);
    switch (m.role) {
      case 'user': {
        const content = personText(m.content, requests);
        return content === undefined ? [] : [{ id, role: 'user', content }];
      }
      case 'assistant': {
        const accepted = (m.tool_calls ?? []).filter((c) => isAccepted(c, results));
        // A reply of text alone reaches the person as an ask_user the chart adds with that text: said once.
        const said = [...new Set([m.content?.trim() ?? '', ...accepted.map(toldThePerson)].filter(Boolean))].join('\n\n');
        const steps = accepted.filter((c) => c.function.name === 'run_worker');
        for (const c of steps) kept.add(c.id);
        if (!said && steps.length === 0) return [];
        return [
          {
            id,
            role: 'assistant',
            ...(said ? { content: said } : {}),
            ...(steps.length
              ? { toolCalls: steps.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })) }
              : {}),
          },
        ];
      }
      case 'tool':
        return kept.has(m.tool_call_id) ? [{ id, role: 'tool', toolCallId: m.tool_call_id, content: m.content }] : [];
      default:
        return [];
    }
  });
}

/** What the person wrote, from a user-role message of the transcript; undefined for a note of the chart's. */
function personText(content: string, requests: ReadonlySet<string>): string | undefined {
  if (requests.has(content)) return content;
  const answers = ANSWERS.exec(content);
  if (answers) return answers[1];
  return NOTES.some((note) => note.test(content)) ? undefined : content;
}

/** A call the chart settled without refusing it (a refusal's result starts "Error: "). */
function isAccepted(call: ToolCall, results: ReadonlyMap<string, string>): boolean {
  const result = results.get(call.id);
  return result !== undefined && !result.startsWith('Error: ');
}

/** The text an accepted boundary call showed the person ("" for any other call). */
function toldThePerson(call: ToolCall): string {
  const name = call.function.name;
  if (!(name in SHOWN)) return '';
  let args: { message?: unknown; questions?: unknown; summary?: unknown };
  try {
    args = JSON.parse(call.function.arguments) as typeof args;
  } catch {
    return '';
  }
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');
  if (name === 'finish') return text(args.summary);
  const questions = Array.isArray(args.questions) ? args.questions.map(text).filter(Boolean) : [];
  return [text(args.message), ...questions.map((q) => `- ${q}`)].filter(Boolean).join('\n');
}
