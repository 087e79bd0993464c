/**
 * The fake OpenAI server answering like the offline demo model (src/models/demo-model.ts),
 * from each request's own messages: for many sessions at once, whose requests arrive in no
 * fixed order. Also the check that a transcript the server received is valid.
 */
import { DemoModel } from '../../src/models/demo-model.js';
import type { ChatMessage } from '../../src/core/models/model.js';
import type { FakeStep } from './fake-openai-server.js';

interface Body {
  messages: ChatMessage[];
  tools?: Array<{ function: { name: string } }>;
}

/** A responder for startFakeOpenAI: the demo model's reply to the request, after `delayMs`. */
export function demoResponder(delayMs: () => number = () => 0): (body: unknown, n: number) => Promise<FakeStep> {
  const demo = new DemoModel();
  return async (body) => {
    const { messages, tools = [] } = body as Body;
    const agent = tools.some((t) => t.function.name === 'submit') ? 'worker' : 'manager';
    const r = await demo.complete({ agent, messages, tools: [] });
    const reply: FakeStep = {
      reply: { content: r.content, toolCalls: r.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) },
    };
    const delay = delayMs();
    return delay > 0 ? { delayMs: delay, then: reply } : reply;
  };
}

/** Problems of a transcript: a tool call without its result, a result without its call. */
export function transcriptProblems(body: unknown): string[] {
  const { messages } = body as Body;
  const problems: string[] = [];
  let open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') {
      if (open.size) problems.push(`message ${i}: tool calls without results: ${[...open].join(', ')}`);
      open = new Set(((m as { tool_calls?: Array<{ id: string }> }).tool_calls ?? []).map((c) => c.id));
    } else if (m.role === 'tool') {
      const id = (m as { tool_call_id: string }).tool_call_id;
      if (!open.delete(id)) problems.push(`message ${i}: a result for ${id}, which no open call has`);
    } else if (open.size) {
      problems.push(`message ${i} (${m.role}): tool calls without results: ${[...open].join(', ')}`);
      open = new Set();
    }
  }
  if (open.size) problems.push(`the end: tool calls without results: ${[...open].join(', ')}`);
  return problems;
}
