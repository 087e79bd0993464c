/**
 * Steward's waits as AG-UI 1.0 interrupts. Each wait of the chart (`waiting_user.*`) is one
 * interrupt whose `responseSchema` is JSON Schema made (`z.toJSONSchema`) from the same zod
 * schemas the user events are checked with (core/machines/session.events.ts), and whose resume
 * payload becomes exactly one user event. The interrupt id names the session and the wait's
 * number (`view.wait`), so it stays the same across reloads, restarts and refused answers,
 * changes with every new wait, and the answer sent for it names that wait: it is applied to
 * that wait or not at all.
 */
import * as z from 'zod';
import type { Interrupt } from '@ag-ui/core';
import {
  StepEdits,
  UserAcceptedArtifact,
  UserAnsweredQuestions,
  UserRejectedArtifact,
  UserSelectedPackage,
  UserSubmittedInput,
  UserAnsweredToolInput,
  UserApprovedToolCall,
  UserGaveToolResult,
  UserRejectedToolCall,
  type UserEvent,
  type UserEventType,
} from '../../core/machines/session.events.js';
import type { WaitingReason } from '../../core/machines/stream-events.js';
import type { SessionView } from '../../core/view.js';
import { canonicalJson } from '../../core/text/canonical-json.js';
import { callsOfWait, isToolWait, type ToolInputResponse } from '../../core/tools/server-tools.js';

/** The AG-UI `reason` of each wait: the spec's core values where one fits, else Steward's namespaced one. */
export const INTERRUPT_REASONS = {
  approve_step: 'tool_call',
  review_artifact: 'steward:artifact_review',
  skill_selection: 'input_required',
  intake: 'input_required',
  input: 'input_required',
  revision: 'input_required',
  worker_questions: 'input_required',
  approve_tool: 'tool_call',
  tool_input: 'input_required',
  tool_interrupted: 'tool_call',
} as const satisfies Record<WaitingReason, string>;

/** approve_step: approve (optionally with a new task and/or another of the worker's roles) or reject with a reason. */
const StepAnswer = z
  .strictObject({
    approved: z.boolean().describe('true runs the step; false sends it back to the manager'),
    reason: StepEdits.shape.reason.describe("approved: the worker's task as you edited it; rejected: why (the manager reads it)"),
    roleId: StepEdits.shape.roleId.describe("approved: another of the worker's roles"),
  })
  .describe('Approve the proposed step (with edits) or reject it');

/** review_artifact: accept (optionally with new bodies for some tags) or reject with notes. */
const ArtifactAnswer = z
  .strictObject({
    accepted: z.boolean().describe('true accepts the artifact; false rejects it (you then describe the changes wanted)'),
    edits: UserAcceptedArtifact.shape.edits.describe('accepted: tag → new body, as you edited it'),
    reason: UserRejectedArtifact.shape.reason.describe('rejected: why (the worker reads it when it revises)'),
  })
  .describe('Accept the artifact under review (with edits) or reject it');

/**
 * approve_tool: a decision on one of the wait's MCP tool calls (the interrupt's toolCallId, or
 * another that waits): approve, maybe with edited arguments, or reject with a reason the model reads.
 */
const ToolCallAnswer = z
  .strictObject({
    callId: UserApprovedToolCall.shape.callId.describe('The tool call decided (default: the interrupt’s toolCallId)').optional(),
    approved: z.boolean().describe('true runs the call; false rejects it (it never runs)'),
    arguments: UserApprovedToolCall.shape.arguments.describe("approved: the call's arguments as you edited them"),
    reason: UserRejectedToolCall.shape.reason.describe('rejected: why (the model reads it as the tool result)'),
  })
  .describe('Approve one tool call (with edited arguments) or reject it');

/** tool_input: the answers to what the call's server asked, by the key of each request (the server's own schema for a form's content). */
const ToolInputAnswerPayload = z
  .strictObject({
    callId: UserAnsweredToolInput.shape.callId.describe('The call whose server asked (default: the interrupt’s toolCallId)').optional(),
    responses: UserAnsweredToolInput.shape.responses.describe('request key → { action: accept | decline | cancel, content (a form, accepted) }'),
  })
  .describe("Answer what the tool's server asked");

/**
 * tool_interrupted: the call cut off by a stopped process runs again (approved, maybe with edited
 * arguments), is skipped (not approved: the model is told), or gets its result by hand (`result`).
 */
const InterruptedCallAnswer = z
  .strictObject({
    callId: UserApprovedToolCall.shape.callId.describe('The interrupted call (default: the interrupt’s toolCallId)').optional(),
    approved: z.boolean().describe('true calls the tool again; false skips it (the model is told it may or may not have taken effect)').optional(),
    arguments: UserApprovedToolCall.shape.arguments.describe("approved: the call's arguments as you edited them"),
    reason: UserRejectedToolCall.shape.reason.describe('skipped: why (the model reads it)'),
    result: UserGaveToolResult.shape.result.describe('instead of approved: the result you give by hand, as the model will read it').optional(),
  })
  .refine((a) => (a.approved === undefined) !== (a.result === undefined), 'give either `approved` (run again or skip) or `result` (its result by hand)')
  .describe('Run the interrupted tool call again, skip it, or give its result');

/** The call a tool wait asks about: the first that waits for a decision, the one asking for input, or the one interrupted. */
const firstPendingCall = (view: SessionView) => callsOfWait(view.toolCalls, view.waitingReason)[0];

/**
 * The JSON Schema of a tool_input answer, with the server's own schema for each form's content
 * (checked with the MCP SDK's validator when the answer is sent): what a client renders as the form.
 */
function toolInputResponseSchema(view: SessionView): Record<string, unknown> {
  const base = z.toJSONSchema(ToolInputAnswerPayload, { unrepresentable: 'any' }) as { properties: Record<string, unknown> } & Record<string, unknown>;
  const requests = firstPendingCall(view)?.input?.requests ?? [];
  const perKey = Object.fromEntries(
    requests.map((r) => [
      r.key,
      {
        type: 'object',
        description: r.mode === 'url' ? `${r.message} (visit ${r.url}, then accept; or decline or cancel)` : r.message,
        properties: { action: { type: 'string', enum: ['accept', 'decline', 'cancel'] }, ...(r.mode === 'form' ? { content: r.requestedSchema } : {}) },
        required: ['action'],
        additionalProperties: false,
      },
    ]),
  );
  const responses = { type: 'object', properties: perKey, required: requests.map((r) => r.key), additionalProperties: false };
  return { ...base, properties: { ...base.properties, responses }, required: ['responses'] };
}

/** The answers of the wait's question card: one optional string per question id, described by the question. */
function answersOf(view: SessionView): z.ZodType {
  const questions = view.questions ?? view.artifact?.questions ?? [];
  const answer = UserAnsweredQuestions.shape.answers.valueType;
  if (questions.length === 0) return UserAnsweredQuestions.shape.answers;
  return z.strictObject(Object.fromEntries(questions.map((q) => [q.id, answer.describe(q.text).optional()])));
}

/** What an input_required answer may be, one variant per user event the wait declares. */
function inputVariants(view: SessionView): Partial<Record<UserEventType, z.ZodType>> {
  return {
    user_submitted_input: z.strictObject({ text: UserSubmittedInput.shape.text }).describe('Your message'),
    user_confirmed_intake: z.strictObject({ confirm: z.literal(true) }).describe('Go on with the request as it stands'),
    user_answered_questions: z.strictObject({ answers: answersOf(view) }).describe('Answers to the questions (question id → answer)'),
    user_skipped_questions: z.strictObject({ skip: z.literal(true) }).describe('Skip the questions'),
    user_selected_package: z.strictObject({ packageId: UserSelectedPackage.shape.packageId }).describe('The package to work with'),
  };
}

/** The zod schema a resume payload for this wait must match. */
export function answerSchema(view: SessionView): z.ZodType {
  const reason = view.waitingReason;
  if (reason === 'approve_step') return StepAnswer;
  if (reason === 'review_artifact') return ArtifactAnswer;
  if (reason === 'approve_tool') return ToolCallAnswer;
  if (reason === 'tool_input') return ToolInputAnswerPayload;
  if (reason === 'tool_interrupted') return InterruptedCallAnswer;
  const variants = inputVariants(view);
  const declared = view.acceptedEvents.flatMap((type) => (variants[type] ? [variants[type]] : []));
  const [first, ...rest] = declared;
  if (!first) throw new Error(`The wait ${String(reason)} declares none of the input events`);
  return rest.length === 0 ? first : z.union([first, ...rest]);
}

/** The interrupt id of the session's wait number `wait` (`view.wait`). */
export function interruptId(sessionId: string, wait: number): string {
  return `${sessionId}#w${wait}`;
}

/**
 * The interrupt id of an approve_tool wait's question about one call: the wait's id and the
 * call's, so that each call is its own interrupt (a resume made for one call and sent again
 * later is stale, never taken for the next call the wait asks about).
 */
export function toolCallInterruptId(sessionId: string, wait: number, callId: string): string {
  return `${interruptId(sessionId, wait)}~${callId}`;
}

/** The wait number an interrupt id names, or null when it is none of this session's. */
export function interruptWait(sessionId: string, id: string): number | null {
  const prefix = `${sessionId}#w`;
  if (!id.startsWith(prefix)) return null;
  const rest = id.slice(prefix.length);
  const call = rest.indexOf('~');
  const wait = Number(call < 0 ? rest : rest.slice(0, call));
  return Number.isSafeInteger(wait) && wait > 0 ? wait : null;
}

/** The tool call an approve_tool interrupt id names (`…#w<wait>~<callId>`), or null. */
export function interruptCall(sessionId: string, id: string): string | null {
  if (interruptWait(sessionId, id) === null) return null;
  const call = id.indexOf('~', `${sessionId}#w`.length);
  return call < 0 || call === id.length - 1 ? null : id.slice(call + 1);
}

/**
 * A tool-call answer without a `callId` is for the call its interrupt id names (`…~<callId>`):
 * sent again once that call was decided, it is compared with that call's decision (a repeat is
 * harmless) or refused, never taken for the next call.
 *
 * @example
 * withInterruptCall('s1', 's1#w3~c1', { result: 'Done.' }); // { result: 'Done.', callId: 'c1' }
 */
export function withInterruptCall(sessionId: string, id: string | undefined, payload: unknown): unknown {
  const callId = id === undefined ? null : interruptCall(sessionId, id);
  if (callId === null || payload === null || typeof payload !== 'object' || Array.isArray(payload) || Object.hasOwn(payload, 'callId')) return payload;
  return { ...payload, callId };
}

/** A one-line prompt for whoever answers (the interrupt's `message`). */
function promptOf(view: SessionView): string {
  const step = view.pendingStep;
  switch (view.waitingReason) {
    case 'approve_step':
      return `Run ${step?.workerId ?? 'the worker'}${step?.roleId ? ` as ${step.roleId}` : ''}: ${step?.reason ?? ''}`.trim();
    case 'review_artifact':
      return `Review artifact ${view.artifact?.id ?? ''} by ${view.artifact?.workerId ?? 'the worker'}.`;
    case 'revision':
      return `Describe the changes wanted to artifact ${view.artifact?.id ?? ''}.`;
    case 'worker_questions':
      return view.message ?? 'The worker asks before it goes on.';
    case 'approve_tool': {
      const call = firstPendingCall(view);
      const waiting = view.toolCalls?.filter((c) => c.status === 'pending').length ?? 0;
      return `Allow ${call ? `${call.server}.${call.tool}` : 'the tool call'}${waiting > 1 ? ` (1 of ${waiting} calls waiting)` : ''}?`;
    }
    case 'tool_input': {
      const call = firstPendingCall(view);
      const asked = call?.input?.requests.map((r) => (r.mode === 'url' ? `${r.message} (${r.url})` : r.message)).join(' / ');
      return `${call ? `${call.server}.${call.tool}` : 'A tool'} asks: ${asked ?? 'for input'}`;
    }
    case 'tool_interrupted': {
      const call = firstPendingCall(view);
      return `${call ? `${call.server}.${call.tool}` : 'A tool call'} was cut off when the process running it stopped (it may or may not have taken effect): run it again, skip it, or give its result?`;
    }
    case 'skill_selection':
      return 'Choose a package.';
    default:
      return view.message ?? (view.waitingReason === 'intake' ? 'What should the team do?' : 'Your turn.');
  }
}

/**
 * The open wait's terms as the protocols carry them in their metadata: its deadline (the
 * view's: level, outcome, after, to, dueAt) and the groups that may decide it; each only when set.
 *
 * @example
 * waitTermsOf(view); // { deadline: { level: 0, outcome: 'escalate', after: '24h', to: 'leads', dueAt: '2026-12-07T09:00:00.000Z' }, deciders: ['ops'] }
 */
export function waitTermsOf(view: Pick<SessionView, 'deadline' | 'deciders'>): { deadline?: SessionView['deadline']; deciders?: string[] } {
  return { ...(view.deadline ? { deadline: view.deadline } : {}), ...(view.deciders ? { deciders: view.deciders } : {}) };
}

/**
 * The interrupt for the wait `view` is in. `toolCallId`: the manager's run_worker call, for an approval.
 *
 * @example
 * const interrupt = interruptFor(view, 'call_3'); // { id: 's_1#w7', reason: 'tool_call', toolCallId: 'call_3', responseSchema: {…}, expiresAt: view.deadline?.dueAt }
 */
export function interruptFor(view: SessionView, toolCallId?: string): Interrupt {
  const reason = view.waitingReason;
  if (!reason || view.wait === undefined) throw new Error(`Session ${view.id} does not wait (${view.state})`);
  const call = isToolWait(reason) ? firstPendingCall(view) : undefined;
  return {
    id: call ? toolCallInterruptId(view.id, view.wait, call.callId) : interruptId(view.id, view.wait),
    reason: INTERRUPT_REASONS[reason],
    message: promptOf(view),
    ...(reason === 'approve_step' && toolCallId ? { toolCallId } : {}),
    // A tool wait names the model's own call: the first that waits (the others follow, one interrupt each).
    ...(call ? { toolCallId: call.callId } : {}),
    responseSchema:
      reason === 'tool_input' ? toolInputResponseSchema(view) : (z.toJSONSchema(answerSchema(view), { unrepresentable: 'any' }) as Record<string, unknown>),
    // AG-UI's own field for when the interrupt stops being answerable; what happens then (and who may answer) is Steward's.
    ...(view.deadline?.dueAt ? { expiresAt: view.deadline.dueAt } : {}),
    metadata: {
      steward: {
        waitingReason: reason,
        wait: view.wait,
        acceptedEvents: view.acceptedEvents,
        ...waitTermsOf(view),
      },
    },
  };
}

export type AnswerProblem = { ok: false; message: string };

/**
 * The user event a resume payload stands for at this wait, checked by the wait's schema;
 * `by` is set by the caller, never taken from the payload.
 */
export function eventForAnswer(view: SessionView, payload: unknown): { ok: true; event: UserEvent } | AnswerProblem {
  const parsed = answerSchema(view).safeParse(payload);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'payload'}: ${i.message}`).join('; ');
    return { ok: false, message: `The resume payload does not match the interrupt's responseSchema: ${problems}. Nothing was sent to the session.` };
  }
  const answer = parsed.data as Record<string, unknown>;
  switch (view.waitingReason) {
    case 'approve_step': {
      const reason = answer.reason as string | undefined;
      const roleId = answer.roleId as string | undefined;
      if (answer.approved !== true) return { ok: true, event: { type: 'user_rejected_next_step', ...(reason !== undefined ? { reason } : {}) } };
      const edits = { ...(reason !== undefined ? { reason } : {}), ...(roleId !== undefined ? { roleId } : {}) };
      return { ok: true, event: { type: 'user_approved_next_step', ...(Object.keys(edits).length > 0 ? { edits } : {}) } };
    }
    case 'approve_tool':
      return { ok: true, event: toolDecision(callNamed(answer, view), answer) };
    case 'tool_input':
      return {
        ok: true,
        event: { type: 'user_answered_tool_input', callId: callNamed(answer, view), responses: answer.responses as Record<string, ToolInputResponse> },
      };
    case 'tool_interrupted': {
      const callId = callNamed(answer, view);
      if (typeof answer.result === 'string') return { ok: true, event: { type: 'user_gave_tool_result', callId, result: answer.result } };
      return { ok: true, event: toolDecision(callId, answer) };
    }
    case 'review_artifact': {
      const artifactId = view.artifact?.id ?? '';
      if (answer.accepted === true) {
        const edits = answer.edits as Record<string, string> | undefined;
        return { ok: true, event: { type: 'user_accepted_artifact', artifactId, ...(edits ? { edits } : {}) } };
      }
      const reason = answer.reason as string | undefined;
      return { ok: true, event: { type: 'user_rejected_artifact', artifactId, ...(reason !== undefined ? { reason } : {}) } };
    }
    default:
      if (typeof answer.text === 'string') return { ok: true, event: { type: 'user_submitted_input', text: answer.text } };
      if (answer.confirm === true) return { ok: true, event: { type: 'user_confirmed_intake' } };
      if (answer.skip === true) return { ok: true, event: { type: 'user_skipped_questions' } };
      if (typeof answer.packageId === 'string') return { ok: true, event: { type: 'user_selected_package', packageId: answer.packageId } };
      return { ok: true, event: { type: 'user_answered_questions', answers: answer.answers as Record<string, string> } };
  }
}

/** The tool call an answer names, else the one its wait asks about. */
const callNamed = (answer: Record<string, unknown>, view: SessionView): string => (answer.callId as string | undefined) ?? firstPendingCall(view)?.callId ?? '';

/** An approval (maybe with edited arguments) or a rejection (maybe with a reason) of one tool call. */
function toolDecision(callId: string, answer: Record<string, unknown>): UserEvent {
  if (answer.approved !== true) {
    const reason = answer.reason as string | undefined;
    return { type: 'user_rejected_tool_call', callId, ...(reason !== undefined ? { reason } : {}) };
  }
  const args = answer.arguments as Record<string, unknown> | undefined;
  return { type: 'user_approved_tool_call', callId, ...(args ? { arguments: args } : {}) };
}

/** The resume payload a journalled user event answers with: the inverse of `eventForAnswer`, to know a resume sent twice. */
export function answerOf(event: { type?: unknown } & Record<string, unknown>): unknown {
  const pick = (...keys: string[]) => Object.fromEntries(keys.filter((k) => event[k] !== undefined).map((k) => [k, event[k]]));
  const edits = (event.edits ?? {}) as Record<string, unknown>;
  switch (event.type) {
    case 'user_approved_next_step':
      return { approved: true, ...edits };
    case 'user_rejected_next_step':
      return { approved: false, ...pick('reason') };
    case 'user_accepted_artifact':
      return { accepted: true, ...pick('edits') };
    case 'user_rejected_artifact':
      return { accepted: false, ...pick('reason') };
    case 'user_submitted_input':
      return pick('text');
    case 'user_confirmed_intake':
      return { confirm: true };
    case 'user_skipped_questions':
      return { skip: true };
    case 'user_answered_questions':
      return pick('answers');
    case 'user_selected_package':
      return pick('packageId');
    case 'user_approved_tool_call':
      return { callId: event.callId, approved: true, ...pick('arguments') };
    case 'user_rejected_tool_call':
      return { callId: event.callId, approved: false, ...pick('reason') };
    case 'user_answered_tool_input':
      return pick('callId', 'responses');
    case 'user_gave_tool_result':
      return { callId: event.callId, result: event.result };
    default:
      return undefined;
  }
}

/** Whether two answers say the same (key order aside). */
export function sameAnswer(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
