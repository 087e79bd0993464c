/**
 * `steward`: the Node runtime — Steward's public API. Everything an app or an outside test
 * relies on is named here. Browser-safe parts are also in `steward/machine` (src/machine.ts),
 * the testing kit in `steward/testing` (src/testing.ts).
 */
export { createRuntime, type Runtime, type RuntimeOptions, type CreateSessionOptions, type ResumeOptions, type SessionHistory } from './runtime/runtime.js';
export type { TranscriptName } from './runtime/archive.js';
export { Session, type SendResult, type SendError } from './runtime/session.js';
export {
  SessionStreamEventSchema,
  type SessionStreamEvent,
  type SessionStreamEventType,
  type StreamEventOf,
  type SessionEventListener,
  type SubscribeOptions,
} from './runtime/session-events.js';
export type { SessionView, ArtifactView, Phase, WaitingReason } from './runtime/view.js';
export { sessionMachine, type SessionMachine, type SessionEvent } from './machines/session.machine.js';
export type { SessionContext, SessionInput, Step, Boundary, Rejection, PackageInfo, Transcripts, TurnAttachments } from './machines/session.context.js';
export type { Transcript, WindowLimits } from './machines/transcript.js';
export { UserEventSchema, userEventTypes, type UserEvent, type UserEventType } from './machines/session.events.js';
export { acceptedUserEvents, enabledUserEvents, readSnapshot, type ChartReading, type Refusal } from './machines/refusals.js';
export { RULES, ruleById, EVENT_GUARDS, type Rule, type RuleId, type Violation, type EventGuard } from './machines/rules.js';
export type { Model, ModelRequest, ModelReply, ChatMessage, ToolCall, ToolSpec, TokenUsage } from './models/model.js';
export { ScriptedModel, scriptedCall, type ScriptStep, type ScriptedReply, type ScriptedToolCall } from './models/scripted-model.js';
export { testAllTransitions, type TestAllTransitionsOptions, type TestAllTransitionsResult } from './testing.js';
export { OpenAIModel, modelFromEnv } from './models/openai-model.js';
export { managerTools, workerTools, managerToolSpecs, workerToolSpecs } from './tools/schemas.js';
export { loadPackage, loadPackages, bundledPackagesDir, type SkillPackage, type WorkerSkill } from './skills/index.js';
export type { SessionStore, JournalEntry, StoredSession, SessionSummary, ArchiveItem, ArchiveItemInput, Lease, LeaseOps, LeaseHolder, EventBus, AppendInput, AppendOptions, ListOptions, SessionPage } from './store/session-store.js';
export { listAll, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from './store/list-page.js';
export { checkSessionId, sessionIdProblem, SESSION_ID_MAX_CHARS } from './ids.js';
export { MemoryStore } from './store/memory-store.js';
export { SqliteStore, defaultDbPath, DURABILITIES, type Durability } from './store/sqlite-store.js';
export type { Artifact, ArtifactStatus, Question } from './blackboard/artifacts.js';
export type { Blackboard, TagVersion, TagSlot, ArchivedVersions } from './blackboard/blackboard.js';
export * from './errors.js';
export { DEFAULT_LIMITS, MAX_BURST_LIMIT, resolveLimits, clip, type Limits } from './limits.js';
export { redactSecrets, redactUrl } from './models/redact.js';
export { DemoModel, DEMO_MODEL_LABEL } from './models/demo-model.js';
export { ManualModel } from './models/manual-model.js';
export {
  startInspector,
  createRemoteInspect,
  setupInspection,
  renderDiagram,
  machineGraph,
  loadStatelyConfig,
  type InspectorHandle,
  type InspectorOptions,
  type MachineGraph,
  type DiagramFormat,
  type StatelyConfig,
} from './inspect/index.js';
