/**
 * The user events as the command line names them: the full event type or a short
 * alias, which options each one takes, and how `steward send` builds the event object.
 */
import { isUserEventType, type UserEvent, type UserEventType } from '../core/machines/session.events.js';
import { callsOfWait, type ToolInputResponse } from '../core/tools/server-tools.js';
import type { SessionView } from '../core/view.js';
import { CliError } from './context.js';
import { proposedItems, reviewedItems } from '../core/team-items.js';

export const EVENT_ALIASES: Readonly<Record<string, UserEventType>> = {
  input: 'user_submitted_input',
  confirm: 'user_confirmed_intake',
  approve: 'user_approved_next_step',
  'reject-step': 'user_rejected_next_step',
  accept: 'user_accepted_artifact',
  reject: 'user_rejected_artifact',
  answer: 'user_answered_questions',
  skip: 'user_skipped_questions',
  select: 'user_selected_package',
  'approve-call': 'user_approved_tool_call',
  'reject-call': 'user_rejected_tool_call',
  'answer-call': 'user_answered_tool_input',
  'give-result': 'user_gave_tool_result',
};

/** What each event is, for menus and help. */
export const EVENT_LABELS: Readonly<Record<UserEventType, string>> = {
  user_selected_package: 'Choose a package',
  user_submitted_input: 'Write a message',
  user_confirmed_intake: 'Confirm the request as it is',
  user_approved_next_step: 'Approve the step',
  user_rejected_next_step: 'Reject the step',
  user_accepted_artifact: 'Accept the artifact',
  user_rejected_artifact: 'Reject the artifact (ask for a revision)',
  user_answered_questions: 'Answer the questions',
  user_skipped_questions: 'Skip the questions',
  user_approved_tool_call: 'Approve a tool call (optionally with edited arguments)',
  user_rejected_tool_call: 'Reject a tool call (it does not run)',
  user_answered_tool_input: "Answer what a tool call's server asks",
  user_gave_tool_result: 'Give the result of an interrupted tool call by hand',
};

/** The option each event takes (`--text`, `--reason`…), and whether it must be given. */
const FIELDS: Readonly<Record<UserEventType, ReadonlyArray<{ option: SendOption; required: boolean }>>> = {
  user_selected_package: [{ option: 'package', required: true }],
  user_submitted_input: [{ option: 'text', required: true }],
  user_confirmed_intake: [],
  user_approved_next_step: [
    { option: 'item', required: false },
    { option: 'reason', required: false },
    { option: 'role', required: false },
  ],
  user_rejected_next_step: [
    { option: 'item', required: false },
    { option: 'reason', required: false },
  ],
  user_accepted_artifact: [
    { option: 'artifact', required: false },
    { option: 'edit', required: false },
  ],
  user_rejected_artifact: [
    { option: 'artifact', required: false },
    { option: 'reason', required: false },
  ],
  user_answered_questions: [{ option: 'answers', required: true }],
  user_skipped_questions: [],
  user_approved_tool_call: [
    { option: 'call', required: false },
    { option: 'arguments', required: false },
  ],
  user_rejected_tool_call: [
    { option: 'call', required: false },
    { option: 'reason', required: false },
  ],
  user_answered_tool_input: [
    { option: 'call', required: false },
    { option: 'responses', required: true },
  ],
  user_gave_tool_result: [
    { option: 'call', required: false },
    { option: 'result', required: true },
  ],
};

export type SendOption = 'text' | 'item' | 'artifact' | 'reason' | 'answers' | 'package' | 'role' | 'edit' | 'call' | 'arguments' | 'responses' | 'result';

/** Each option's text; `edit` is tag → new body (from `--edit TAG --text-file F` pairs). */
export type SendOptions = Partial<Record<Exclude<SendOption, 'edit'>, string>> & { edit?: Record<string, string>; by?: string };

export function aliasOf(type: UserEventType): string {
  return Object.entries(EVENT_ALIASES).find(([, full]) => full === type)?.[0] ?? type;
}

export function resolveEventName(name: string): UserEventType {
  const type = Object.hasOwn(EVENT_ALIASES, name) ? EVENT_ALIASES[name]! : name; // "constructor" is not an alias
  if (isUserEventType(type)) return type;
  const known = Object.entries(EVENT_ALIASES)
    .map(([alias, full]) => `${alias} (${full})`)
    .join(', ');
  throw new CliError('usage', `Unknown event "${name}". Events: ${known}.`);
}

/** `--answers` as given on the command line: a JSON object of question ids to answers. */
export function parseAnswers(text: string): Record<string, string> {
  const hint = `--answers must be a JSON object of question ids to answers, e.g. '{"q1": "yes", "q2": "in the 1920s"}'`;
  const value = parseJsonObject(text, hint);
  const wrong = Object.entries(value).filter(([, answer]) => typeof answer !== 'string');
  if (wrong.length > 0) {
    throw new CliError('usage', `${hint}; the answer to ${wrong.map(([id]) => `"${id}"`).join(', ')} is not a string.`);
  }
  return value as Record<string, string>;
}

/**
 * The event `steward send` sends. Options that the event does not take are refused (so a
 * typo never silently drops a reason); `accept`/`reject` default to the artifact under review.
 */
export function buildEvent(type: UserEventType, options: SendOptions, view: SessionView): UserEvent {
  const fields = FIELDS[type];
  const allowed = new Set(fields.map((f) => f.option));
  const extra = (Object.keys(options) as (SendOption | 'by')[]).filter((o): o is SendOption => o !== 'by' && options[o] !== undefined && !allowed.has(o));
  if (options.item !== undefined && (type === 'user_rejected_artifact' || type === 'user_accepted_artifact')) {
    // `reject` is the artifact's; a proposed step of a fan-out is rejected with reject-step.
    const step = type === 'user_rejected_artifact' ? 'reject-step' : 'approve';
    throw new CliError(
      'usage',
      `--item names a proposed step, not an artifact: decide it with \`${step} --item ${options.item}\` (or name the artifact with --artifact).`,
    );
  }
  if (extra.length > 0) {
    const takes = fields.length ? fields.map((f) => `--${f.option}`).join(', ') : 'no options';
    throw new CliError('usage', `${extra.map((o) => `--${o}`).join(', ')} does not apply to ${type} (it takes ${takes}).`);
  }
  for (const { option, required } of fields) {
    if (required && options[option] === undefined) throw new CliError('usage', `${type} needs --${option}.`);
  }
  const by = options.by !== undefined ? { by: options.by } : {};
  return { ...eventFor(type, options, view), ...by } as UserEvent;
}

function eventFor(type: UserEventType, options: SendOptions, view: SessionView): UserEvent {
  switch (type) {
    case 'user_selected_package':
      return { type, packageId: options.package! };
    case 'user_submitted_input':
      return { type, text: options.text! };
    case 'user_answered_questions':
      return { type, answers: parseAnswers(options.answers!) };
    case 'user_rejected_next_step':
      return { type, ...stepItem(type, options.item, view), ...(options.reason !== undefined ? { reason: options.reason } : {}) };
    case 'user_approved_next_step': {
      // --reason / --role edit the step before approving it (the manager is told).
      const edits = { ...(options.reason !== undefined ? { reason: options.reason } : {}), ...(options.role !== undefined ? { roleId: options.role } : {}) };
      return { type, ...stepItem(type, options.item, view), ...(Object.keys(edits).length ? { edits } : {}) };
    }
    case 'user_accepted_artifact':
    case 'user_rejected_artifact': {
      const artifactId = options.artifact ?? onlyArtifactUnderReview(type, view);
      if (artifactId === undefined) {
        const accepted = view.acceptedEvents.map(aliasOf).join(', ') || 'none';
        const refused = !view.acceptedEvents.includes(type);
        throw new CliError(
          refused ? 'event_refused' : 'usage',
          `${type} needs --artifact: no artifact is under review (the session is in ${view.state}; accepted now: ${accepted}).`,
        );
      }
      return type === 'user_accepted_artifact'
        ? { type, artifactId, ...(options.edit ? { edits: options.edit } : {}) }
        : { type, artifactId, ...(options.reason !== undefined ? { reason: options.reason } : {}) };
    }
    case 'user_answered_tool_input':
      return { type, callId: options.call ?? onlyPendingCall(type, view), responses: parseResponses(options.responses!) };
    case 'user_gave_tool_result':
      return { type, callId: options.call ?? onlyPendingCall(type, view), result: options.result! };
    case 'user_approved_tool_call':
    case 'user_rejected_tool_call': {
      const callId = options.call ?? onlyPendingCall(type, view);
      if (type === 'user_rejected_tool_call') return { type, callId, ...(options.reason !== undefined ? { reason: options.reason } : {}) };
      return { type, callId, ...(options.arguments !== undefined ? { arguments: parseArguments(options.arguments) } : {}) };
    }
    default:
      return { type } as UserEvent;
  }
}

/**
 * The item a step decision names (`--item`): as given, or, in a fan-out, the one step that
 * still waits; with several waiting, the person names one (the session would refuse a guess).
 */
function stepItem(type: UserEventType, item: string | undefined, view: SessionView): { item?: string } {
  if (item !== undefined) return { item };
  const proposed = proposedItems(view);
  if (proposed.length === 0) return {};
  if (proposed.length === 1) return { item: proposed[0]!.item };
  const listed = proposed.map((t) => `${t.item} (${t.workerId})`).join(', ');
  throw new CliError('usage', `${type} needs --item: ${proposed.length} proposed steps wait, each decided on its own: ${listed}.`);
}

/** The artifact an accept or reject is for without `--artifact`: the one under review; in a fan-in, only if one alone is left. */
function onlyArtifactUnderReview(type: UserEventType, view: SessionView): string | undefined {
  const submitted = reviewedItems(view);
  if (submitted.length <= 1) return view.artifact?.id;
  const listed = submitted.map((t) => `${t.artifact.id} (${t.workerId})`).join(', ');
  throw new CliError('usage', `${type} needs --artifact: ${submitted.length} artifacts are under review, each decided on its own: ${listed}.`);
}

/** The call a tool decision is for when `--call` is left out: the one call the wait is about, if only one is. */
function onlyPendingCall(type: UserEventType, view: SessionView): string {
  const pending = callsOfWait(view.toolCalls, view.waitingReason);
  if (pending.length === 1) return pending[0]!.callId;
  const listed = pending.map((c) => `${c.callId} (${c.server}.${c.tool})`).join(', ');
  throw new CliError(
    pending.length === 0 && !view.acceptedEvents.includes(type) ? 'event_refused' : 'usage',
    pending.length === 0
      ? `${type} needs a tool call that waits for a decision; none does (the session is in ${view.state}).`
      : `${type} needs --call: ${pending.length} calls wait for a decision: ${listed}.`,
  );
}

/** What a parsed JSON value is, in words: "an array", "null", "a string"… */
const kindOf = (value: unknown) => (Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`);

/**
 * `text` read as a JSON object, or what it is instead (not JSON, with the parser's reason; or
 * another kind of value): the CLI's options and the interactive prompts read objects this one way.
 */
export function jsonObjectOf(text: string): { object: Record<string, unknown> } | { notJson: string } | { got: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { notJson: (error as Error).message };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { got: kindOf(value) };
  return { object: value as Record<string, unknown> };
}

/** A JSON object given on the command line (`hint` says what it must be), or a usage error naming what it got. */
function parseJsonObject(text: string, hint: string): Record<string, unknown> {
  const parsed = jsonObjectOf(text);
  if ('notJson' in parsed) throw new CliError('usage', `${hint}; got invalid JSON (${parsed.notJson}).`);
  if ('got' in parsed) throw new CliError('usage', `${hint}; got ${parsed.got}.`);
  return parsed.object;
}

/** `--arguments` as given on the command line: the edited arguments, a JSON object. */
function parseArguments(text: string): Record<string, unknown> {
  return parseJsonObject(text, `--arguments must be a JSON object of the tool's arguments, e.g. '{"path": "notes.md"}'`);
}

/**
 * `--responses` as given on the command line: the answers to a server's requests, a JSON object
 * by request key (the event's schema checks each answer when it is sent).
 */
function parseResponses(text: string): Record<string, ToolInputResponse> {
  const hint = `--responses must be a JSON object of request keys to answers, e.g. '{"confirm": {"action": "accept", "content": {"ok": true}}}' (or "decline", "cancel")`;
  return parseJsonObject(text, hint) as Record<string, ToolInputResponse>;
}
