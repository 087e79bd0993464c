/**
 * Sessions that reach a worker's MCP tool waits with the notes package (notes-package.ts):
 * tool_input through the server's own confirm_write form, tool_interrupted through a `toolCall`
 * actor that says the call was cut off (what the runtime's says of a call a dead process left
 * under way; test/tools/tool-calls.test.ts makes one for real), and what the model then reads.
 */
import { fromPromise } from 'xstate';
import { sessionMachine } from '../../src/machine.js';
import type { ToolCallInput, ToolCallOutput } from '../../src/core/tools/server-tools.js';
import { ScriptedModel, scriptedCall, type ScriptStep, type ScriptedToolCall } from '../../src/testing.js';
import { runKeeper, submitReply, toolResultsIn } from './notes-package.js';

/**
 * For each call, one session's worth of steps: the manager runs the keeper, the worker makes
 * the call (`c1`), then submits; `read[i]` is what session i's worker read as the call's result.
 */
export function callsModel(...calls: ScriptedToolCall[]) {
  const read: string[] = [];
  const steps = calls.flatMap((call, i): ScriptStep[] => [
    { agent: 'manager', toolCalls: [runKeeper()] },
    { agent: 'worker', toolCalls: [call] },
    (request) => {
      read[i] = String(toolResultsIn(request).c1);
      return submitReply('Kept.');
    },
  ]);
  return { model: new ScriptedModel(steps), read };
}

/** A write the server asks a person to confirm (a form), and a plain write (destructive: both wait for approval first). */
export const confirmWrite = () => scriptedCall('notes__confirm_write', { path: 'a.md', text: 'One' }, 'c1');
export const writeNote = () => scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'c1');

/** The chart with a `toolCall` actor that says every call was cut off by a stopped process. */
export const cutOffCalls = sessionMachine.provide({
  actors: { toolCall: fromPromise<ToolCallOutput, ToolCallInput>(async ({ input }) => ({ callId: input.item.callId, outcome: 'interrupted' })) },
});

/** The form confirm_write's server asks for. */
export const CONFIRM_FORM = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Write it' }, initials: { type: 'string', minLength: 2, title: 'Your initials' } },
  required: ['confirm', 'initials'],
};

/** Answers to it: accepted, and accepted with initials the form refuses (minLength 2). */
export const CONFIRMED = { confirm: { action: 'accept' as const, content: { confirm: true, initials: 'AB' } } };
export const BAD_INITIALS = { confirm: { action: 'accept' as const, content: { confirm: true, initials: 'x' } } };

/** A result given by hand for a cut-off call, and what the model reads of it. */
export const GIVEN = 'a.md holds "One".';
export const READ_GIVEN = `(A person gave this result by hand: the call was cut off when the process running it stopped.)\n${GIVEN}`;
