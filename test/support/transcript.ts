/**
 * What a transcript sent to the model must be, checked by the property tests: every assistant
 * tool call has an id of its own, its results follow right after it in the calls' order (text
 * content), and no tool message stands alone. Checked after every send of thousands of
 * sessions: hot-expect.ts's assertions.
 */
import type { ChatMessage } from '../../src/core/models/model.js';
import { expectNotToBe, expectToBe, expectToBeGreaterThan, expectToEqual } from './hot-expect.js';

export function expectValidTranscript(who: string, messages: readonly ChatMessage[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    expectNotToBe(m.role, 'tool', `${who}[${i}]: a tool result that does not follow its assistant message`);
    if (m.role !== 'assistant' || m.tool_calls === undefined) continue;
    expectToBeGreaterThan(m.tool_calls.length, 0, `${who}[${i}]: tool_calls must be omitted, not empty`);
    const ids = m.tool_calls.map((c) => c.id);
    for (const id of ids) {
      expectToBe(typeof id === 'string' && id !== '' && !seen.has(id), true, `${who}[${i}]: tool call id ${String(id)} missing or used twice`);
      seen.add(id);
    }
    const results = messages.slice(i + 1, i + 1 + ids.length);
    expectToEqual(
      results.map((r) => (r.role === 'tool' ? r.tool_call_id : `(${r.role})`)),
      ids,
      `${who}[${i}]: each call's result, right after it, in order`,
    );
    for (const r of results) expectToBe(typeof r.content, 'string', `${who}: tool result content is text`);
    i += ids.length;
  }
}
