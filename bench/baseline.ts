/**
 * The bare XState v5 baseline of SCENARIO.md: one machine whose `thinking` state invokes a
 * `fromPromise` fake model and re-enters on a loop tool (the tool runs inline in an
 * `assign`), goes to `waiting` on the boundary tool, and resumes on an `ANSWER` event.
 * No validation, no prompt assembly beyond a fixed system message, no persistence but the
 * durable mode's JSON round trip at each wait. Same fake model, same transcript check.
 */
import { assign, createActor, fromPromise, setup, waitFor, type Actor } from 'xstate';
import type { ChatMessage, ModelReply, ToolSpec } from '../src/core/models/model.js';
import type { FakeModel } from './fake-model.js';
import { answerText, BURSTS, FIRST_INPUT, seedTags, verifyTranscript } from './scenario.js';
import type { SessionSamples } from './stats.js';

interface BaselineContext {
  messages: ChatMessage[];
  blackboard: Record<string, string>;
}

const SYSTEM: ChatMessage = { role: 'system', content: 'You plan the task. Read the blackboard with read_blackboard, then ask_user; finish when done.' };
const TOOLS: ToolSpec[] = [
  { name: 'read_blackboard', description: 'Read tags.', parameters: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } } },
  { name: 'ask_user', description: 'Ask the user.', parameters: { type: 'object', properties: { message: { type: 'string' } } } },
  { name: 'finish', description: 'Finish.', parameters: { type: 'object', properties: { summary: { type: 'string' } } } },
];

const toolName = (reply: ModelReply) => reply.toolCalls[0]?.function.name;

/** The assistant message and the tool's result, appended after a reply. */
function afterReply(context: BaselineContext, reply: ModelReply): ChatMessage[] {
  const call = reply.toolCalls[0]!;
  let result: string;
  if (call.function.name === 'read_blackboard') {
    const { tags } = JSON.parse(call.function.arguments) as { tags: string[] };
    result = tags.map((t) => `## ${t}\n${context.blackboard[t] ?? '(no such tag)'}`).join('\n\n');
  } else {
    result = call.function.name === 'finish' ? 'The session is finished.' : 'Shown to the user; their reply follows.';
  }
  return [
    ...context.messages,
    { role: 'assistant', content: reply.content, tool_calls: reply.toolCalls },
    { role: 'tool', tool_call_id: call.id, content: result },
  ];
}

export function createBaselineMachine(model: FakeModel) {
  return setup({
    types: {
      context: {} as BaselineContext,
      input: {} as { blackboard: Record<string, string> },
      events: {} as { type: 'ANSWER'; text: string },
    },
    actors: {
      model: fromPromise<ModelReply, { messages: ChatMessage[] }>(({ input }) =>
        model.complete({ agent: 'manager', messages: [SYSTEM, ...input.messages], tools: TOOLS }),
      ),
    },
  }).createMachine({
    id: 'baseline',
    context: ({ input }) => ({ messages: [], blackboard: input.blackboard }),
    initial: 'waiting',
    states: {
      waiting: {
        on: {
          ANSWER: { target: 'thinking', actions: assign({ messages: ({ context, event }) => [...context.messages, { role: 'user', content: event.text }] }) },
        },
      },
      thinking: {
        invoke: {
          src: 'model',
          input: ({ context }) => ({ messages: context.messages }),
          onDone: [
            {
              guard: ({ event }) => toolName(event.output) === 'read_blackboard',
              target: 'thinking',
              reenter: true,
              actions: assign({ messages: ({ context, event }) => afterReply(context, event.output) }),
            },
            {
              guard: ({ event }) => toolName(event.output) === 'finish',
              target: 'done',
              actions: assign({ messages: ({ context, event }) => afterReply(context, event.output) }),
            },
            { target: 'waiting', actions: assign({ messages: ({ context, event }) => afterReply(context, event.output) }) },
          ],
        },
      },
      done: { type: 'final' },
    },
  });
}

export type BaselineMachine = ReturnType<typeof createBaselineMachine>;
export type BaselineActor = Actor<BaselineMachine>;

const SEED_JSON = JSON.stringify(Object.fromEntries(seedTags()));

export function startBaseline(machine: BaselineMachine): BaselineActor {
  // Each session gets its own copy of the seeded blackboard, as each Steward session does.
  return createActor(machine, { input: { blackboard: JSON.parse(SEED_JSON) as Record<string, string> } }).start();
}

/** Sends the user's text; resolves when the machine waits again (or is done). */
export function answer(actor: BaselineActor, text: string) {
  actor.send({ type: 'ANSWER', text });
  return waitFor(actor, (s) => s.status !== 'active' || s.matches('waiting'));
}

/** The durable mode's wait: persist as JSON, drop the actor, restore it from the JSON. */
export function persistDropRestore(machine: BaselineMachine, actor: BaselineActor): BaselineActor {
  const json = JSON.stringify(actor.getPersistedSnapshot());
  actor.stop();
  return restoreBaseline(machine, json);
}

/** Input is required by the machine's types but unused when restoring a snapshot. */
export function restoreBaseline(machine: BaselineMachine, json: string): BaselineActor {
  return createActor(machine, { snapshot: JSON.parse(json) as never, input: { blackboard: {} } }).start();
}

export async function runBaselineSession(model: FakeModel, machine: BaselineMachine, durable: boolean): Promise<SessionSamples> {
  const waitSeen: number[] = [];
  const resumeStart: number[] = [];
  model.begin();
  let actor = startBaseline(machine);
  let snap = await answer(actor, FIRST_INPUT);
  for (let c = 0; c < BURSTS; c++) {
    waitSeen.push(performance.now());
    if (snap.status !== 'active' || !snap.matches('waiting'))
      throw new Error(`[baseline] expected to wait after burst ${c + 1}, got ${JSON.stringify(snap.value)}`);
    resumeStart.push(performance.now());
    if (durable) actor = persistDropRestore(machine, actor);
    snap = await answer(actor, answerText(c + 1));
  }
  if (snap.status !== 'done') throw new Error(`[baseline] expected done, got ${snap.status} ${JSON.stringify(snap.value)}`);
  const stamps = model.takeStamps();
  verifyTranscript(durable ? 'baseline durable' : 'baseline hot', snap.context.messages, model.calls);
  return { stamps, waitSeen, resumeStart };
}
