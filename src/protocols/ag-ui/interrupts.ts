/**
 * Steward's waits as AG-UI 1.0 interrupts. Each wait of the chart (`waiting_user.*`) is one
 * interrupt (or one per thing it asks about: a worker's MCP calls, a fan-out's steps or
 * artifacts, team-interrupts.ts; their ids in interrupt-ids.ts) whose `responseSchema` is JSON
 * Schema made (`z.toJSONSchema`) from the same zod schemas the user events are checked with
 * (answer-schemas.ts), and whose resume payload becomes exactly one user event. The interrupt
 * id names the session and the wait's number (`view.wait`), so it stays the same across
 * reloads, restarts and refused answers, changes with every new wait, and the answer sent for
 * it names that wait: it is applied to that wait or not at all.
 */
import * as z from 'zod';
import type { Interrupt } from '@ag-ui/core';
import { UserAnsweredQuestions, UserSelectedPackage, UserSubmittedInput, type UserEvent, type UserEventType } from '../../core/machines/session.events.js';
import type { WaitingReason } from '../../core/machines/stream-events.js';
import type { SessionView } from '../../core/view.js';
import { canonicalJson } from '../../core/text/canonical-json.js';
import { callsOfWait, isToolWait, type ToolInputResponse } from '../../core/tools/server-tools.js';
import { ArtifactAnswer, InterruptedCallAnswer, StepAnswer, ToolCallAnswer, ToolInputAnswerPayload } from './answer-schemas.js';
import { interruptId, toolCallInterruptId } from './interrupt-ids.js';
import { itemInterruptParts, itemsAnswerSchema } from './team-interrupts.js';

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
  // A fan-out's items: the answer names the one it decides.
  const items = itemsAnswerSchema(view);
  if (items) return items;
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
 * The interrupts of the wait `view` is in: one, or one per item the wait asks about (a
 * fan-out's steps, a fan-in's artifacts), each answered on its own. `toolCallId`: the manager's
 * run_worker call, for the approval of a single step.
 *
 * @example
 * const interrupts = interruptsFor(view, 'call_3'); // [{ id: 's_1#w7', reason: 'tool_call', toolCallId: 'call_3', responseSchema: {…} }]
 */
export function interruptsFor(view: SessionView, toolCallId?: string): Interrupt[] {
  const reason = view.waitingReason;
  if (!reason || view.wait === undefined) throw new Error(`Session ${view.id} does not wait (${view.state})`);
  const wait = view.wait;
  // What every interrupt of the wait says: its reason, when it stops being answerable, and the wait's terms.
  const of = (own: { id: string; message: string; toolCallId?: string; responseSchema: Record<string, unknown> }, steward = {}): Interrupt => ({
    id: own.id,
    reason: INTERRUPT_REASONS[reason],
    message: own.message,
    ...(own.toolCallId ? { toolCallId: own.toolCallId } : {}),
    responseSchema: own.responseSchema,
    // AG-UI's own field for when the interrupt stops being answerable; what happens then (and who may answer) is Steward's.
    ...(view.deadline?.dueAt ? { expiresAt: view.deadline.dueAt } : {}),
    metadata: { steward: { waitingReason: reason, wait, acceptedEvents: view.acceptedEvents, ...waitTermsOf(view), ...steward } },
  });
  const items = itemInterruptParts(view);
  if (items.length > 0) return items.map((item) => of(item, item.steward));
  // A tool wait names the model's own call: the first that waits (the others follow, one interrupt each).
  const call = isToolWait(reason) ? firstPendingCall(view) : undefined;
  const bound = call?.callId ?? (reason === 'approve_step' ? toolCallId : undefined);
  return [
    of({
      id: call ? toolCallInterruptId(view.id, wait, call.callId) : interruptId(view.id, wait),
      message: promptOf(view),
      ...(bound ? { toolCallId: bound } : {}),
      responseSchema:
        reason === 'tool_input' ? toolInputResponseSchema(view) : (z.toJSONSchema(answerSchema(view), { unrepresentable: 'any' }) as Record<string, unknown>),
    }),
  ];
}

/**
 * The interrupt for the wait `view` is in (of a wait with items, the first item's). `toolCallId`: the manager's run_worker call, for an approval.
 *
 * @example
 * const interrupt = interruptFor(view, 'call_3'); // { id: 's_1#w7', reason: 'tool_call', toolCallId: 'call_3', responseSchema: {…}, expiresAt: view.deadline?.dueAt }
 */
export function interruptFor(view: SessionView, toolCallId?: string): Interrupt {
  return interruptsFor(view, toolCallId)[0]!;
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
      // A fan-out's step names its item (the run_worker call); a single step names none.
      const item = typeof answer.item === 'string' ? { item: answer.item } : {};
      if (answer.approved !== true) return { ok: true, event: { type: 'user_rejected_next_step', ...item, ...(reason !== undefined ? { reason } : {}) } };
      const edits = { ...(reason !== undefined ? { reason } : {}), ...(roleId !== undefined ? { roleId } : {}) };
      return { ok: true, event: { type: 'user_approved_next_step', ...item, ...(Object.keys(edits).length > 0 ? { edits } : {}) } };
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
      // A fan-in's answer names its artifact; a single review's is the one under review.
      const artifactId = (answer.artifactId as string | undefined) ?? view.artifact?.id ?? '';
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
      return { approved: true, ...edits, ...pick('item') };
    case 'user_rejected_next_step':
      return { approved: false, ...pick('reason', 'item') };
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
