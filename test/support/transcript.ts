/**
 * What a transcript sent to the model must be, checked by the property tests: every assistant
 * tool call has an id of its own, its results follow right after it in the calls' order (text
 * content), and no tool message stands alone.
 */
import { expect } from 'vitest';
import type { ChatMessage } from '../../src/core/models/model.js';

export function expectValidTranscript(who: string, messages: readonly ChatMessage[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    expect(m.role, `${who}[${i}]: a tool result that does not follow its assistant message`).not.toBe('tool');
    if (m.role !== 'assistant' || m.tool_calls === undefined) continue;
    expect(m.tool_calls.length, `${who}[${i}]: tool_calls must be omitted, not empty`).toBeGreaterThan(0);
    const ids = m.tool_calls.map((c) => c.id);
    for (const id of ids) {
      expect(typeof id === 'string' && id !== '' && !seen.has(id), `${who}[${i}]: tool call id ${String(id)} missing or used twice`).toBe(true);
      seen.add(id);
    }
    const results = messages.slice(i + 1, i + 1 + ids.length);
    expect(
      results.map((r) => (r.role === 'tool' ? r.tool_call_id : `(${r.role})`)),
      `${who}[${i}]: each call's result, right after it, in order`,
    ).toEqual(ids);
    for (const r of results) expect(typeof r.content, `${who}: tool result content is text`).toBe('string');
    i += ids.length;
  }
}
