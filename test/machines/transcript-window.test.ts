/**
 * The transcript window (src/core/machines/transcript.ts): with a small window, what the context
 * keeps — and so what the model is sent — is always valid for the API (every tool call has
 * its result right after it, no orphan result), never over its bound (but for the latest
 * group alone), and nothing a step appended is cut before the runtime archives it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendToTranscript, EMPTY_TRANSCRIPT, messageSize, type Transcript, type WindowLimits } from '../../src/core/machines/transcript.js';
import type { ChatMessage, ModelRequest, ToolCall } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/index.js';
import { scriptedCall as call, ScriptedModel, type ScriptStep } from '../../src/testing.js';
import { expectValidTranscript } from '../support/transcript.js';

/** Groups in a window: a user message, or an assistant message with its tool results. */
const groupsOf = (messages: readonly ChatMessage[]) => messages.filter((m) => m.role !== 'tool').length;
const sizeOf = (messages: readonly ChatMessage[]) => messages.reduce((n, m) => n + messageSize(m), 0);
const within = (messages: readonly ChatMessage[], limits: WindowLimits) => messages.length <= limits.messages && sizeOf(messages) <= limits.chars;

type GenGroup = { kind: 'user'; size: number } | { kind: 'assistant'; size: number; results: number[] };
const genGroup: fc.Arbitrary<GenGroup> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), size: fc.nat(300) }),
  fc.record({ kind: fc.constant('assistant' as const), size: fc.nat(200), results: fc.array(fc.nat(400), { maxLength: 5 }) }),
);
const genLimits = fc.record({ messages: fc.integer({ min: 1, max: 12 }), chars: fc.integer({ min: 1, max: 1500 }) });

describe('transcript window', () => {
  it('appends keep the window valid, within its bound or one step alone, and lose nothing of the step', () => {
    fc.assert(
      fc.property(genLimits, fc.array(genGroup, { maxLength: 60 }), (limits, groups) => {
        let t: Transcript = EMPTY_TRANSCRIPT;
        let appended = 0;
        let callNo = 0;
        const step = (added: ChatMessage[]) => {
          t = appendToTranscript(t, limits, added);
          appended += added.length;
          // What this step appended is all still there, at the end, numbered on from before.
          expect(t.messages.slice(-added.length)).toEqual(added);
          expect(t.total).toBe(appended);
          expect(t.omitted + t.messages.length).toBe(appended);
          expect(t.chars).toBe(sizeOf(t.messages));
        };
        for (const g of groups) {
          if (g.kind === 'user') {
            step([{ role: 'user', content: 'u'.repeat(g.size) }]);
          } else if (g.results.length === 0) {
            // A reply without tool calls gets the runtime's nudge in the same step.
            step([
              { role: 'assistant', content: 'a'.repeat(g.size) },
              { role: 'user', content: 'Reply by calling one of your tools.' },
            ]);
          } else {
            const calls: ToolCall[] = g.results.map(() => ({
              id: `c${++callNo}`,
              type: 'function',
              function: { name: 'read_blackboard', arguments: '{"tags":["x"]}' },
            }));
            step([{ role: 'assistant', content: 'a'.repeat(g.size), tool_calls: calls }]);
            g.results.forEach((size, i) => step([{ role: 'tool', tool_call_id: calls[i]!.id, content: 'r'.repeat(size) }]));
          }
          // After each whole group — what a prompt sees — the window is valid and bounded.
          expectValidTranscript('window', t.messages);
          if (!within(t.messages, limits)) expect(groupsOf(t.messages), 'over the bound only with the latest step alone').toBeLessThanOrEqual(2);
          if (groupsOf(t.messages) > 2) expect(within(t.messages, limits)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('the prompts a session sends with a small window are valid and bounded, within one long turn too; the history keeps everything', async () => {
    const limits: WindowLimits = { messages: 6, chars: 600 };
    const loopCall = fc.constantFrom(
      call('read_blackboard', { tags: ['request'] }),
      call('list_workers'),
      call('list_artifacts'),
      call('no_such_tool'), // refused by rule 1: its result is an error, still a result
      call('read_blackboard', '{"tags": ['), // refused by rule 2
    );
    const genBurst = fc.array(fc.array(loopCall, { minLength: 1, maxLength: 4 }), { minLength: 0, maxLength: 9 });
    await fc.assert(
      fc.asyncProperty(fc.array(genBurst, { minLength: 1, maxLength: 4 }), async (bursts) => {
        const steps: ScriptStep[] = [];
        for (const burst of bursts) {
          for (const calls of burst) steps.push({ agent: 'manager', toolCalls: calls });
          steps.push({ agent: 'manager', toolCalls: [call('ask_user', { message: 'Go on?' })] });
        }
        const model = new ScriptedModel(steps);
        const runtime = createRuntime({ model, maxBurst: 12, window: limits });
        const session = await runtime.createSession({ packageId: 'tiny' });
        for (let b = 0; b < bursts.length; b++) {
          const r = await session.send({ type: 'user_submitted_input', text: `part ${b}: ${'w'.repeat(40)}` });
          expect(r.ok).toBe(true);
        }
        model.assertComplete();
        model.calls.forEach((request: ModelRequest, i) => {
          const [system, ...rest] = request.messages;
          expect(system!.role).toBe('system');
          const window = rest[0]?.role === 'user' && rest[0].content.includes('earlier messages are omitted') ? rest.slice(1) : rest;
          expectValidTranscript(`prompt ${i + 1}`, window);
          if (!within(window, limits)) expect(groupsOf(window), `prompt ${i + 1} over the bound`).toBeLessThanOrEqual(1);
        });
        // Nothing is lost: the whole transcript has every user message and every call's result.
        const all = await session.transcript('manager');
        expectValidTranscript('history', all);
        expect(all.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(bursts.map((_, b) => `part ${b}: ${'w'.repeat(40)}`));
        expect(all.filter((m) => m.role === 'tool')).toHaveLength(steps.reduce((n, s) => n + (s as { toolCalls: unknown[] }).toolCalls.length, 0));
        session.stop();
      }),
      { numRuns: 60 },
    );
  });
});
