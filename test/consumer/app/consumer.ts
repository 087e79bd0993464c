// (b) A TypeScript app compiled with `tsc --strict` against the installed declarations
// (tsconfig.nodenext.json and tsconfig.bundler.json).
import { createRuntime, InternalError, MemoryStore, type SendResult, type SessionView, type Runtime, type StewardErrorCode } from 'steward';
import { renderDiagram, startInspector } from 'steward/inspect';
import { sessionMachine, UserEventSchema, enabledUserEvents, type ModelReply, type UserEvent } from 'steward/machine';
import { ScriptedModel, scriptedCall, testAllTransitions, type TestAllTransitionsResult } from 'steward/testing';
import type { SessionStore, StoredSession } from 'steward/store';
import { createActor, fromPromise } from 'xstate';

const runtime: Runtime = createRuntime({ model: new ScriptedModel([]), store: new MemoryStore() });
export async function first(): Promise<SessionView> {
  const session = await runtime.createSession({ packageId: 'tiny' });
  // A typed send: an event that is not a UserEvent does not compile (JavaScript callers get an invalid_event).
  // @ts-expect-error not a user event
  await session.send({ type: 'user_danced' });
  return session.view();
}

// SendError is discriminated by its code: a refusal carries the chart's reading.
export function codeOf(result: SendResult): StewardErrorCode | 'ok' {
  if (result.ok) return 'ok';
  if (result.error.code === 'event_refused') console.log(result.error.enabled.join(', '));
  return result.error.code;
}
export const isBug = (error: unknown): boolean => InternalError.isInstance(error);
export const diagram = (): string => renderDiagram(sessionMachine, 'mermaid');
export const inspector: typeof startInspector = startInspector;

const event: UserEvent = UserEventSchema.parse({ type: 'user_submitted_input', text: 'hi' });
const actor = createActor(sessionMachine, { input: { sessionId: 's1', catalog: [] } });
export const offered: string[] = enabledUserEvents(actor.getSnapshot());
export const sent: UserEvent['type'] = event.type;

// A store of one's own is typed from steward/store; the runtime takes any SessionStore.
export const onStore = (store: SessionStore): Runtime => createRuntime({ model: new ScriptedModel([]), store });
export const revisionOf = async (store: SessionStore, id: string): Promise<number | undefined> =>
  store.load(id).then((stored: StoredSession | undefined) => stored?.revision);

export const coverage: () => TestAllTransitionsResult = () => testAllTransitions(sessionMachine.provide({}));

// A scripted step's tool call is not a ToolCall: putting it in a model reply must not compile.
// @ts-expect-error scriptedCall() is for ScriptedModel steps only
export const wrong: ModelReply = { content: null, toolCalls: [scriptedCall('finish', { summary: 'x' })] };

// Nor as an actor's output.
export const wrongActor = sessionMachine.provide({
  actors: {
    // @ts-expect-error scriptedCall() is for ScriptedModel steps only
    managerTurn: fromPromise(async (): Promise<ModelReply> => ({ content: null, toolCalls: [scriptedCall('finish', { summary: 'x' })] })),
  },
});
