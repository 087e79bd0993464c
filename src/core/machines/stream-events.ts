/**
 * The live events of a session, as `session.subscribe()` and `session.stream()` deliver them
 * and as the inspector forwards them over SSE. One zod schema is the source of the types, so
 * a page or another process can check what it receives (`SessionStreamEventSchema.parse`).
 *
 * Every event carries `sessionId` and `at` (epoch ms, when Steward saw it). Strings a model
 * wrote (tool names, text deltas, refusal messages) are data: show them escaped.
 *
 * The chart emits these (session.reports.ts), so they live beside it; the runtime only delivers them.
 */
import * as z from 'zod';
import { TOOL_WAIT_STATUS, type ToolWait } from '../tools/server-tools.js';

/** What the session waits for: the substates of `waiting_user`. The one list; the type, the live events and the HTTP schema derive from it. */
export const WaitingReasonSchema = z.enum([
  'skill_selection',
  'intake',
  'input',
  'approve_step',
  'review_artifact',
  'worker_questions',
  'revision',
  'approve_tool',
  'tool_input',
  'tool_interrupted',
]);
export type WaitingReason = z.infer<typeof WaitingReasonSchema>;

/** Longest tool name an event carries: a model may invent any name, of any length. */
export const MAX_TOOL_NAME = 100;

const Agent = z.enum(['manager', 'worker']);
const Usage = z.strictObject({ promptTokens: z.number().int().nonnegative(), completionTokens: z.number().int().nonnegative() });

const base = { sessionId: z.string(), at: z.number() };

/** Which model call an event belongs to. */
const round = {
  agent: Agent,
  /** The worker running, for a worker round; null for the manager. */
  workerId: z.string().nullable(),
  /** The round within the burst, 1-based (the burst restarts at each user action). */
  burst: z.number().int().positive(),
  maxBurst: z.number().int().positive(),
  /** Model calls of the whole session so far, this one included. */
  round: z.number().int().positive(),
};

export const StateEnteredEvent = z.strictObject({
  type: z.literal('state_entered'),
  ...base,
  /** Dotted state, e.g. "running.manager.checking"; "done" once the session ended. */
  state: z.string(),
});

export const RoundStartedEvent = z.strictObject({ type: z.literal('round_started'), ...base, ...round });

export const RoundFinishedEvent = z.strictObject({
  type: z.literal('round_finished'),
  ...base,
  ...round,
  /** replied: the model answered; failed: it threw (see `error`); stopped: the session stopped mid-call. */
  outcome: z.enum(['replied', 'failed', 'stopped']),
  /** From the round's start, or from subscribe() for a round that was under way then. */
  durationMs: z.number().nonnegative(),
  /** What this call cost, when the model reported it. */
  usage: Usage.nullable(),
  /** The session's total after this call. */
  totalUsage: Usage,
  /** Names of the tool calls in the reply, in order (each is checked next). */
  toolCalls: z.array(z.string()),
  error: z.string().optional(),
});

export const TextDeltaEvent = z.strictObject({
  type: z.literal('text_delta'),
  ...base,
  ...round,
  /** The next piece of the reply's text (consecutive pieces may arrive merged). */
  text: z.string(),
});

/**
 * The raw argument text of a tool call in flight, as the model streams it (models that do
 * not stream send none). `agent` is "manager" or the running worker's id; `callIndex` is the
 * call's place in the reply; `callId` and `name` come when the model sends them (OpenAI: in
 * the call's first piece). The pieces of one call join to its `arguments`.
 */
export const ToolCallDeltaEvent = z.strictObject({
  type: z.literal('tool_call_delta'),
  ...base,
  round: round.round,
  agent: z.string(),
  callIndex: z.number().int().nonnegative(),
  callId: z.string().optional(),
  name: z.string().max(MAX_TOOL_NAME).optional(),
  argumentsDelta: z.string(),
});

/**
 * Text appended to one tag's body of a worker's `submit` in flight (its draft). All deltas of
 * one tag in one round join to exactly the body `artifact_published` then writes; a draft
 * that will not be published ends with `artifact_draft_discarded` instead.
 */
export const ArtifactDeltaEvent = z.strictObject({
  type: z.literal('artifact_delta'),
  ...base,
  round: round.round,
  worker: z.string(),
  tag: z.string(),
  delta: z.string(),
});

/**
 * The draft of `round` (its artifact deltas so far, every tag) is void: the submit was
 * refused by a rule (`rule`), the round failed or stopped, or the published body differs
 * from the draft (`replaced`: the whole bodies follow as new deltas of the same round).
 */
export const ArtifactDraftDiscardedEvent = z.strictObject({
  type: z.literal('artifact_draft_discarded'),
  ...base,
  round: round.round,
  worker: z.string(),
  reason: z.enum(['refused', 'failed', 'stopped', 'replaced']),
  rule: z.string().optional(),
});

export const ToolCallCheckedEvent = z.strictObject({
  type: z.literal('tool_call_checked'),
  ...base,
  agent: Agent,
  workerId: z.string().nullable(),
  callId: z.string(),
  tool: z.string().max(MAX_TOOL_NAME),
  accepted: z.boolean(),
  /** For a refused call: the rule it broke (a guard name of the machine) and what the model was told. */
  rule: z.string().optional(),
  message: z.string().optional(),
});

/** Which MCP tool call an event is about: its call id in the worker's reply, and the server's tool. */
const serverCall = { callId: z.string(), server: z.string(), tool: z.string().max(MAX_TOOL_NAME) };

/**
 * A person decided one call: approved or rejected in `approve_tool` (the wait ends when every call
 * is decided); in `tool_interrupted`, run again (approved), skipped (rejected) or its result given
 * (`result_given`); in `tool_input`, the server's question answered (`answered`).
 */
export const ToolCallDecidedEvent = z.strictObject({
  type: z.literal('tool_call_decided'),
  ...base,
  ...serverCall,
  wait: z.number().int().nonnegative(),
  /** The wait the decision was made in. */
  reason: z.enum(Object.keys(TOOL_WAIT_STATUS) as [ToolWait, ...ToolWait[]]),
  decision: z.enum(['approved', 'rejected', 'answered', 'result_given']),
  by: z.string().nullable(),
  /** Approved with arguments the person edited. */
  edited: z.boolean(),
});

/** An approved MCP tool call starts (the journal holds it before the server is called). */
export const ToolCallStartedEvent = z.strictObject({ type: z.literal('tool_call_started'), ...base, ...serverCall });

/**
 * An MCP tool call ended: `result` (the server answered; `isError` when it reported an error),
 * `failed` (the call could not be made or broke off), `definition_changed` (the tool is no
 * longer the one approved: the call did not run and waits for a person again),
 * `input_required` (the server asks a person for input: the call waits in tool_input and goes
 * on once answered), or `interrupted` (the process running it stopped mid-call: it waits in
 * tool_interrupted, not repeated).
 */
export const ToolCallFinishedEvent = z.strictObject({
  type: z.literal('tool_call_finished'),
  ...base,
  ...serverCall,
  outcome: z.enum(['result', 'failed', 'definition_changed', 'input_required', 'interrupted']),
  isError: z.boolean(),
  durationMs: z.number().nonnegative().nullable(),
});

export const ArtifactPublishedEvent = z.strictObject({
  type: z.literal('artifact_published'),
  ...base,
  artifactId: z.string(),
  workerId: z.string(),
  /** tag → version written. */
  tags: z.record(z.string(), z.number().int()),
  revises: z.string().nullable(),
});

export const NoticeEvent = z.strictObject({ type: z.literal('notice'), ...base, text: z.string() });

export const UserEventRefusedEvent = z.strictObject({
  type: z.literal('user_event_refused'),
  ...base,
  eventType: z.string(),
  reason: z.string(),
  /** `wait_closed`: the event named a wait that is not open; `not_a_decider`: its sender is in none of the groups the wait names; absent: any other refusal. */
  code: z.enum(['wait_closed', 'not_a_decider']).optional(),
});

/**
 * A deadline of the open wait passed (deadlines.ts): the rule's outcome — `reject` (the wait
 * is answered no), `escalate` (it re-opens for the group `to`, as a new wait), `remind`
 * (nothing changes) — with its interval and its place in the wait's chain (`level`).
 */
export const DeadlinePassedStreamEvent = z.strictObject({
  type: z.literal('deadline_passed'),
  ...base,
  reason: WaitingReasonSchema,
  wait: z.number().int().nonnegative(),
  level: z.number().int().nonnegative(),
  outcome: z.enum(['reject', 'escalate', 'remind']),
  after: z.string(),
  to: z.string().nullable(),
});

export const WaitingEvent = z.strictObject({
  type: z.literal('waiting'),
  ...base,
  reason: WaitingReasonSchema,
  state: z.string(),
  /** The wait's number: what a decision for it names (`wait` on a user event). */
  wait: z.number().int().nonnegative(),
});

/**
 * A person's decision ended a wait: the user event the waiting state took, who sent it
 * (`by`, null when the event named nobody), and what they edited (field names for a step,
 * tags for an artifact; never the bodies). In approve_step, why the step waited.
 */
export const DecisionEvent = z.strictObject({
  type: z.literal('decision'),
  ...base,
  /** The wait the decision ended (or, `item`, one item of), and its number. */
  reason: WaitingReasonSchema,
  wait: z.number().int().nonnegative(),
  eventType: z.string(),
  by: z.string().nullable(),
  edits: z.array(z.string()),
  approvalRequiredBy: z.enum(['policy', 'model']).optional(),
  /** A fan-out's item the decision is about (its run_worker call, or the artifact): each is decided on its own, the last one ends the wait. */
  item: z.string().optional(),
});

export const DoneEvent = z.strictObject({ type: z.literal('done'), ...base, summary: z.string().nullable() });

export const StoppedEvent = z.strictObject({
  type: z.literal('stopped'),
  ...base,
  /** stopped: stop()/close() or a failed write; failed: the actor failed (see `error`). */
  reason: z.enum(['stopped', 'failed']),
  error: z.string().optional(),
});

export const SessionStreamEventSchema = z.discriminatedUnion('type', [
  StateEnteredEvent,
  RoundStartedEvent,
  RoundFinishedEvent,
  TextDeltaEvent,
  ToolCallDeltaEvent,
  ArtifactDeltaEvent,
  ArtifactDraftDiscardedEvent,
  ToolCallCheckedEvent,
  ToolCallDecidedEvent,
  ToolCallStartedEvent,
  ToolCallFinishedEvent,
  ArtifactPublishedEvent,
  NoticeEvent,
  UserEventRefusedEvent,
  DeadlinePassedStreamEvent,
  WaitingEvent,
  DecisionEvent,
  DoneEvent,
  StoppedEvent,
]);

export type SessionStreamEvent = z.infer<typeof SessionStreamEventSchema>;
export type SessionStreamEventType = SessionStreamEvent['type'];
/** The event of one type, e.g. `StreamEventOf<'round_finished'>`. */
export type StreamEventOf<T extends SessionStreamEventType> = Extract<SessionStreamEvent, { type: T }>;
