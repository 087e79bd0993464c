/**
 * `steward/machine`: the session statechart and everything needed to drive it without the
 * Node runtime — in a browser, a worker, or a React component. Nothing imported from here
 * (directly or not) may import `node:*`, a native module or the store: the consumer test
 * bundles this entry with esbuild for `platform: 'browser'`, and test/consumer compiles
 * a DOM-only TypeScript project against its declarations.
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
export { sessionMachine, replyGuardContext, type SessionMachine, type SessionEvent } from './machines/session.machine.js';
export {
  DEFAULT_MAX_BURST,
  type SessionContext,
  type SessionInput,
  type TurnOutput,
  type Step,
  type Boundary,
  type Rejection,
  type PackageInfo,
  type Transcripts,
  type TurnAttachments,
} from './machines/session.context.js';
export type { Transcript, WindowLimits } from './machines/transcript.js';
export {
  UserEventSchema,
  userEventTypes,
  isUserEventType,
  UserSelectedPackage,
  UserSubmittedInput,
  UserConfirmedIntake,
  UserApprovedNextStep,
  UserRejectedNextStep,
  UserAcceptedArtifact,
  UserRejectedArtifact,
  UserAnsweredQuestions,
  UserSkippedQuestions,
  type UserEvent,
  type UserEventType,
} from './machines/session.events.js';
export { acceptedUserEvents, enabledUserEvents, readSnapshot, type ChartReading, type Refusal } from './machines/refusals.js';
export { RULES, ruleById, EVENT_GUARDS, type Rule, type RuleId, type Violation, type EventGuard } from './machines/rules.js';
export {
  managerTools,
  workerTools,
  managerToolSpecs,
  workerToolSpecs,
  ReadBlackboardArgs,
  ListWorkersArgs,
  ListArtifactsArgs,
  RunWorkerArgs,
  ManagerAskUserArgs,
  ReviewBlackboardArgs,
  FinishArgs,
  SubmitArgs,
  WorkerAskUserArgs,
  type ToolDefinition,
  type ToolActor,
  type ToolKind,
  type ManagerToolName,
  type WorkerToolName,
} from './tools/schemas.js';
export type { WorkerInfo } from './tools/validation.js';
export { sessionView, artifactView, WaitingReasonSchema, type SessionView, type ArtifactView, type Phase, type WaitingReason } from './runtime/view.js';
export type { SessionSnapshot } from './runtime/session-snapshot.js';
export { createManagerTurn, createWorkerTurn, type SkillPromptLookup } from './agents/turns.js';
export type { Model, ModelRequest, ModelReply, ChatMessage, ToolCall, ToolSpec, TokenUsage } from './models/model.js';
export { REQUEST_TAG, type Blackboard, type TagVersion, type TagSlot, type ArchivedVersions } from './blackboard/blackboard.js';
export type { Artifact, ArtifactStatus, Question } from './blackboard/artifacts.js';
export * from './errors.js';
export {
  SessionStreamEventSchema,
  type SessionStreamEvent,
  type SessionStreamEventType,
  type StreamEventOf,
} from './runtime/session-events.js';
