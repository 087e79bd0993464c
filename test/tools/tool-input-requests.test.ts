/** What a server asks during a call, made into bounded data before it reaches the journal (src/runtime/tool-input.ts). */
import { describe, expect, it } from 'vitest';
import type { InputRequests } from '@modelcontextprotocol/client';
import { inputRequestsOf, inputResponsesOf, TOOL_INPUT_LIMITS } from '../../src/runtime/tool-input.js';

const form = (message: string, requestedSchema: unknown = { type: 'object', properties: {} }) =>
  ({ method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } }) as never;

describe('inputRequestsOf', () => {
  it('keeps forms and pages to visit, with long messages cut', () => {
    const asked = inputRequestsOf({
      a: form('x'.repeat(5_000)),
      b: { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://id.example/login', elicitationId: 'e9' } } as never,
    });
    expect('requests' in asked && asked.requests.map((r) => [r.key, r.mode, r.message.length])).toEqual([
      ['a', 'form', TOOL_INPUT_LIMITS.messageChars],
      ['b', 'url', 7],
    ]);
  });

  it.each([
    [{}, 'The server asked for input but sent no request.'],
    [{ s: { method: 'sampling/createMessage', params: {} } }, /"sampling\/createMessage", which Steward does not offer/],
    [{ u: { method: 'elicitation/create', params: { mode: 'url', message: 'Go', url: 'javascript:alert(1)' } } }, /not an http\(s\) address/],
    [{ f: { method: 'elicitation/create', params: { mode: 'form', message: 'No schema' } } }, 'The server\'s form "f" has no schema.'],
    [{ f: form('Big', { type: 'object', description: 'x'.repeat(40_000) }) }, /is over 32000 characters as JSON/],
    [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, form('q')])), /asked 21 questions at once/],
  ] as [InputRequests, string | RegExp][])('refuses what it cannot show or answer (%#)', (raw, problem) => {
    const asked = inputRequestsOf(raw);
    expect('problem' in asked).toBe(true);
    if ('problem' in asked) expect(asked.problem).toMatch(problem);
  });
});

describe('inputResponsesOf', () => {
  it('gives each answer back as an elicitation result; content only with an accept', () => {
    expect(
      inputResponsesOf({ a: { action: 'accept', content: { ok: true } }, b: { action: 'decline', content: { ok: true } }, c: { action: 'cancel' } }),
    ).toEqual({
      a: { action: 'accept', content: { ok: true } },
      b: { action: 'decline' },
      c: { action: 'cancel' },
    });
  });
});
