/**
 * The two waits of a running MCP call, on the chart with actors of the test's own: the worker's
 * turn is the catalogue's `tool_write` (one write a person approves) and the `toolCall` actor
 * plays back outputs. tool_input: the answers go back to the call (and only to it); wrong answers
 * are refused with the guard's words. tool_interrupted: run again reaches the actor again (with a
 * person's say), skip and a result given by hand never do, and the model reads each.
 */
import { describe, expect, it } from 'vitest';
import { fromPromise } from 'xstate';
import { createRuntime } from '../../src/index.js';
import { sessionMachine, type TurnOutput } from '../../src/machine.js';
import { scriptedCall, ScriptedModel, testingPackage, workerReplies } from '../../src/testing.js';
import type { ToolCallInput, ToolCallOutput } from '../../src/core/tools/server-tools.js';
import type { ChatMessage } from '../../src/machine.js';
import { submitReply } from '../tools/notes-package.js';

const FORM = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };

/** A session at the approved call `call_t2`, whose toolCall actor answers with `outputs` in turn (and records its inputs). */
async function atApprovedCall(outputs: ((input: ToolCallInput) => ToolCallOutput)[]) {
  const inputs: ToolCallInput[] = [];
  let told: ChatMessage[] = [];
  const writes = workerReplies(testingPackage, 'noter').tool_write!;
  const submit: TurnOutput = submitReply('Done.');
  let turns = 0;
  const machine = sessionMachine.provide({
    actors: {
      workerTurn: fromPromise<TurnOutput, { transcripts: { worker: { messages: ChatMessage[] } } }>(async ({ input }) => {
        turns += 1;
        if (turns === 1) return writes;
        told = input.transcripts.worker.messages.filter((m) => m.role === 'tool');
        return submit;
      }) as never,
      toolCall: fromPromise<ToolCallOutput, ToolCallInput>(async ({ input }) => {
        inputs.push(input);
        const next = outputs.shift();
        if (!next) throw new Error('the toolCall actor was called more often than the test expects');
        return next(input);
      }),
    },
  });
  const model = new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Note it.', requiresApproval: false })] },
  ]);
  const runtime = createRuntime({ model, machine });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const first = await session.send({ type: 'user_submitted_input', text: 'Note it.' });
  expect(first.ok && first.view.state).toBe('waiting_user.approve_tool');
  const approved = await session.send({ type: 'user_approved_tool_call', callId: 'call_t2' });
  if (!approved.ok) throw new Error(approved.error.message);
  return { session, inputs, told: () => told.map((m) => String(m.content)), view: approved.view };
}

const asks = ({ item }: ToolCallInput): ToolCallOutput => ({
  callId: item.callId,
  outcome: 'input_required',
  requests: [
    { key: 'confirm', mode: 'form', message: 'Sure?', requestedSchema: FORM },
    { key: 'login', mode: 'url', message: 'Sign in.', url: 'https://notes.example/login', elicitationId: 'e1' },
  ],
  requestState: 'state-1',
});
const answers = ({ item }: ToolCallInput): ToolCallOutput => ({
  callId: item.callId,
  outcome: 'result',
  text: `answered ${JSON.stringify(item.input?.responses)}`,
  isError: false,
});
const cutOff = ({ item }: ToolCallInput): ToolCallOutput => ({ callId: item.callId, outcome: 'interrupted' });
const wrote = ({ item }: ToolCallInput): ToolCallOutput => ({ callId: item.callId, outcome: 'result', text: 'wrote a.md', isError: false });

describe('tool_input: a server asks a person during the call', () => {
  it('waits with the requests; wrong answers are refused; the answers go back to the same call with the server’s state', async () => {
    const { session, inputs, told, view } = await atApprovedCall([asks, answers]);
    expect(view.state).toBe('waiting_user.tool_input');
    expect(view.toolCalls?.[0]).toMatchObject({ callId: 'call_t2', status: 'asking', input: { requestState: 'state-1' } });
    const refusals = [
      [
        { callId: 'call_x', responses: { confirm: { action: 'decline' }, login: { action: 'cancel' } } },
        /^No call "call_x" waits for input; the call asking is "call_t2"/,
      ],
      [{ callId: 'call_t2', responses: { confirm: { action: 'decline' } } }, /unanswered: login/],
      [{ callId: 'call_t2', responses: { confirm: { action: 'accept' }, login: { action: 'accept' } } }, /"confirm" is a form: an accept carries its content/],
      [
        { callId: 'call_t2', responses: { confirm: { action: 'decline' }, login: { action: 'accept', content: { ok: true } } } },
        /"login" asks the person to visit a page/,
      ],
    ] as const;
    for (const [answer, message] of refusals) {
      const refused = await session.send({ type: 'user_answered_tool_input', ...answer } as never);
      expect(refused.ok || refused.error.message).toMatch(message);
    }
    expect(inputs).toHaveLength(1);
    const sent = await session.send({
      type: 'user_answered_tool_input',
      callId: 'call_t2',
      responses: { confirm: { action: 'accept', content: { ok: true } }, login: { action: 'accept' } },
    });
    expect(sent.ok && sent.view.state).toBe('waiting_user.review_artifact');
    expect(inputs).toHaveLength(2);
    expect(inputs[1]!.item.input).toEqual({
      requests: expect.any(Array),
      requestState: 'state-1',
      responses: { confirm: { action: 'accept', content: { ok: true } }, login: { action: 'accept' } },
    });
    expect(told()).toEqual(['answered {"confirm":{"action":"accept","content":{"ok":true}},"login":{"action":"accept"}}']);
  });
});

describe('tool_interrupted: a call cut off by a stopped process', () => {
  it('run again: the call reaches the actor a second time, fresh, and its result is the model’s', async () => {
    const { session, inputs, told, view } = await atApprovedCall([cutOff, wrote]);
    expect(view.state).toBe('waiting_user.tool_interrupted');
    expect(view.toolCalls?.[0]?.status).toBe('interrupted');
    const again = await session.send({ type: 'user_approved_tool_call', callId: 'call_t2', by: 'ana' });
    expect(again.ok ? again.view.state : again.error.message).toBe('waiting_user.review_artifact');
    expect(inputs.map((i) => i.item.status)).toEqual(['approved', 'approved']);
    expect(told()).toEqual(['wrote a.md']);
  });

  it('skip: the actor is not called again; the model is told the call may or may not have taken effect', async () => {
    const { session, inputs, told } = await atApprovedCall([cutOff]);
    const skipped = await session.send({ type: 'user_rejected_tool_call', callId: 'call_t2', reason: 'I will look myself.' });
    expect(skipped.ok && skipped.view.state).toBe('waiting_user.review_artifact');
    expect(inputs).toHaveLength(1);
    expect(told()).toEqual([
      'Error: this call was cut off when the process running it stopped, so it may or may not have taken effect; a person chose not to run it again. Check what it did before you call it again. Their reason: I will look myself.',
    ]);
  });

  it('a result by hand: the actor is not called again; a decision for another call is refused', async () => {
    const { session, inputs, told } = await atApprovedCall([cutOff]);
    const wrong = await session.send({ type: 'user_gave_tool_result', callId: 'call_t9', result: 'x' });
    expect(wrong.ok || wrong.error.message).toBe(
      'No call "call_t9" was interrupted; the interrupted call is "call_t2" (files.write_note). Nothing was changed.',
    );
    const given = await session.send({ type: 'user_gave_tool_result', callId: 'call_t2', result: 'a.md holds "Hi."' });
    expect(given.ok && given.view.state).toBe('waiting_user.review_artifact');
    expect(inputs).toHaveLength(1);
    expect(told()).toEqual(['(A person gave this result by hand: the call was cut off when the process running it stopped.)\na.md holds "Hi."']);
  });
});
