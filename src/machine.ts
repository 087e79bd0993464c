/**
 * `steward/machine`: the session statechart and everything needed to drive it without the
 * Node runtime — in a browser, a worker, or a React component. It is made of src/core alone,
 * whose files import nothing but each other, xstate, zod and immer (no `node:*`, no native
 * module, no store; test/api/core-closure.test.ts); the consumer test bundles this entry with
 * esbuild for `platform: 'browser'`, and test/consumer compiles a DOM-only TypeScript project
 * against its declarations.
 *
 * @example
 * import { createActor } from 'xstate';
 * import { sessionMachine, createManagerTurn, createWorkerTurn, enabledUserEvents } from 'steward/machine';
 *
 * const machine = sessionMachine.provide({
 *   actors: { managerTurn: createManagerTurn(model), workerTurn: createWorkerTurn(model, promptOf) },
 * });
 * const actor = createActor(machine, { input: { sessionId: 's1', package: myPackage } }).start();
 * actor.send({ type: 'user_submitted_input', text: 'A ghost story' });
 * enabledUserEvents(actor.getSnapshot()); // what a UI should offer now
 */
export { sessionMachine, type SessionMachine, type SessionEvent } from './core/machines/session.machine.js';
export {
  DEFAULT_MAX_BURST,
  type SessionContext,
  type SessionInput,
  type TurnOutput,
  type Step,
  type Boundary,
  type Rejection,
  type PackageInfo,
} from './core/machines/session.context.js';
export {
  DECISION_CHANNELS,
  UserEventSchema,
  userEventTypes,
  type DecisionChannel,
  type UserEvent,
  type UserEventType,
} from './core/machines/session.events.js';
export { acceptedUserEvents, enabledUserEvents, readSnapshot, type ChartReading, type Refusal } from './core/machines/refusals.js';
export { sessionView, type SessionView, type ArtifactView, type DeadlineView, type ViewExtras, type Phase } from './core/view.js';
export type { SessionSnapshot } from './core/machines/session-snapshot.js';
export { createManagerTurn, createWorkerTurn, type DeltaLookup, type SkillPromptLookup, type TurnOptions } from './core/agents/turns.js';
export type { DeltaSinks } from './core/models/model.js';
export type { ApprovalRule } from './core/agents/approvals.js';
export type { ApprovalPolicy, ApprovalRequiredBy, ProposedStep } from './core/machines/approval.js';
export type { Model, ModelRequest, ModelReply, ChatMessage, ToolCall, ToolSpec, TokenUsage, ToolCallDelta } from './core/models/model.js';
export type { Blackboard, TagVersion } from './core/blackboard/blackboard.js';
export type { Artifact, ArtifactStatus, Question } from './core/blackboard/artifacts.js';
export * from './core/errors.js';
export {
  SessionStreamEventSchema,
  WaitingReasonSchema,
  type SessionStreamEvent,
  type SessionStreamEventType,
  type StreamEventOf,
  type WaitingReason,
} from './core/machines/stream-events.js';
export type { PackageUpgradedEvent } from './core/machines/package-upgrade.js';
