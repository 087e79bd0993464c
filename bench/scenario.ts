/**
 * The burst workflow of /work/shared/bench/SCENARIO.md: its constants, the script the fake
 * model follows, the seeded blackboard, and the transcript check run after every session.
 * Shared by the Steward harness and the bare XState baseline, so both do the same work.
 */
import type { ChatMessage } from '../src/core/models/model.js';

export const K = 5; // loop-tool rounds per burst
export const BURSTS = 3; // user turns
export const MAX_BURST = 12;
export const TAGS = 16;
/**
 * The transcript window the Steward runs get: the fake model decides from the number of tool
 * results in its prompt, so the prompt must hold the whole session (BURSTS × (1 + 2 × (K + 1))
 * + 1 = 40 messages), as the baseline's does; Steward's default window (30 messages) holds
 * about two bursts.
 */
export const SCENARIO_WINDOW = { messages: 60 };
/** Model calls per burst: K reads + the boundary call. */
export const CALLS_PER_BURST = K + 1;
/** 19: BURSTS bursts of K + 1 calls, then finish. */
export const CALLS_PER_SESSION = BURSTS * CALLS_PER_BURST + 1;
/** Events a durable Steward journals between a burst's first call and its wait: the user's input + K + 1 manager turns. */
export const EVENTS_PER_BURST = 1 + CALLS_PER_BURST;

export const FIRST_INPUT = 'Please plan the task using the blackboard.';
export const answerText = (b: number) => `answer-${b}: yes, go ahead`; // b = 1..BURSTS
export const tagOf = (b: number, p: number) => `k${(b * K + p) % TAGS}`; // b = 0.., p = 0..K-1
export const bodyOf = (tag: string) => `value-of-${tag}-${'x'.repeat(32)}`;
export const questionOf = (b: number) => `Burst ${b + 1} is done: shall I go on?`;
export const FINISH_SUMMARY = 'The plan is complete.';

/** The seeded tags k0..k15 as (tag, body) pairs. */
export const seedTags = (): [string, string][] => Array.from({ length: TAGS }, (_, i) => [`k${i}`, bodyOf(`k${i}`)]);

export type Step = { tool: 'read_blackboard'; tag: string } | { tool: 'ask_user'; burst: number } | { tool: 'finish' };

/**
 * The script: the step to take given only the number of tool results seen so far.
 * n = b * (K + 1) + p: rounds p < K read, round K asks; after BURSTS bursts, finish.
 */
export function stepFor(toolResults: number): Step {
  const b = Math.floor(toolResults / CALLS_PER_BURST);
  const p = toolResults % CALLS_PER_BURST;
  if (b >= BURSTS) return { tool: 'finish' };
  if (p < K) return { tool: 'read_blackboard', tag: tagOf(b, p) };
  return { tool: 'ask_user', burst: b };
}

/** The whole expected script, call by call. */
export const EXPECTED_STEPS: Step[] = Array.from({ length: CALLS_PER_SESSION }, (_, i) => stepFor(i));

export class TranscriptError extends Error {
  override name = 'TranscriptError';
}

/**
 * Checks a finished session's transcript (OpenAI wire shape, system prompt excluded):
 * 19 assistant calls in script order, each read's result holds `value-of-kN-` for the right
 * N, every call has its result, and the user's inputs come in order. `calls` is how many
 * times the fake model was called for this session. Throws a TranscriptError naming the fault.
 */
export function verifyTranscript(label: string, messages: readonly ChatMessage[], calls: number): void {
  const fail = (why: string): never => {
    throw new TranscriptError(`[${label}] transcript check failed: ${why}`);
  };
  if (calls !== CALLS_PER_SESSION) fail(`the model was called ${calls} times, expected ${CALLS_PER_SESSION}`);
  const users = messages.filter((m) => m.role === 'user').map((m) => m.content);
  const expectedUsers = [FIRST_INPUT, ...Array.from({ length: BURSTS }, (_, i) => answerText(i + 1))];
  if (users.length !== expectedUsers.length || users.some((u, i) => !u.includes(expectedUsers[i]!))) {
    fail(`user messages ${JSON.stringify(users)}, expected ${JSON.stringify(expectedUsers)}`);
  }
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool') results.set(m.tool_call_id, m.content);
  const assistants = messages.filter((m): m is Extract<ChatMessage, { role: 'assistant' }> => m.role === 'assistant');
  if (assistants.length !== CALLS_PER_SESSION) fail(`${assistants.length} assistant messages, expected ${CALLS_PER_SESSION}`);
  assistants.forEach((a, i) => {
    const expected = EXPECTED_STEPS[i]!;
    const call = a.tool_calls?.[0];
    if (!call || a.tool_calls!.length !== 1) fail(`call #${i + 1} has ${a.tool_calls?.length ?? 0} tool calls, expected 1`);
    if (call!.function.name !== expected.tool) fail(`call #${i + 1} is ${call!.function.name}, expected ${expected.tool}`);
    const result = results.get(call!.id);
    if (result === undefined) fail(`call #${i + 1} (${call!.id}) has no tool result`);
    if (expected.tool === 'read_blackboard') {
      const args = JSON.parse(call!.function.arguments) as { tags?: string[] };
      if (args.tags?.[0] !== expected.tag) fail(`call #${i + 1} read ${JSON.stringify(args.tags)}, expected ${expected.tag}`);
      if (!result!.includes(`value-of-${expected.tag}-`)) fail(`call #${i + 1} read ${expected.tag} but got ${JSON.stringify(result!.slice(0, 80))}`);
      for (const [other] of seedTags()) {
        if (other !== expected.tag && result!.includes(`value-of-${other}-`)) fail(`call #${i + 1} read ${expected.tag} but the result holds ${other}`);
      }
    }
  });
}
