/**
 * The nine user events of the tool contract, and the four on a server-tool call (approve, reject,
 * answer its server's question, give an interrupted call's result): plain objects named as there, each a strict
 * zod object so that `session.send()` refuses a malformed payload before the machine sees it.
 * Every event may say who acted (`by`, and in which `groups`), through what (`through`) and which wait it answers (`wait`); an approval may
 * edit the step, an acceptance the artifact's bodies.
 */
// A namespace import: bundlers drop the parts of zod that are not used (the `z` object would keep all of it).
import * as z from 'zod';
import { ownRecord } from '../blackboard/keyed.js';
import { boundedString, DEFAULT_LIMITS } from '../limits.js';
import { CONTROL_OR_INVISIBLE } from '../text/names.js';
import { CallerGroupsSchema } from './deadlines.js';

const text = z.string().trim().min(1, 'must not be empty');

/**
 * When the event happened. The runtime stamps it (`session.send()` sets it from its clock), so
 * that the machine's transitions stay pure: a time the context keeps comes from the event.
 */
const at = z.iso.datetime({ offset: true }).optional();

/** The longest `by` (who acted) kept: a name, an email, a token's name. */
export const BY_MAX_CHARS = 120;

/**
 * A name of who acted (an event's `by`, a decision link's recipient): the CLI's `--as`
 * (default the OS user), the inspector's token name, the API's caller. Data like any text:
 * printed through the terminal-safe functions, bounded here.
 */
export const ActorNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(BY_MAX_CHARS, `longer than ${BY_MAX_CHARS} characters: give a shorter name`)
  // A name is one visible line: no newline to forge a journal line, no zero-width or bidi mark to hide a reserved name.
  .refine((name) => !CONTROL_OR_INVISIBLE.test(name), 'holds a control or invisible character (a newline, a zero-width or bidi mark): give a plain name');
const by = ActorNameSchema.optional();

/**
 * Who sent the event for `by`, when they differ: `steward serve` sets it to the name of a
 * token allowed to act for others (and refuses it in a request). Kept in the journal with
 * the event; the machine never reads it.
 */
const via = by;

/**
 * The surfaces a person decides through, as the journal records them (`through`): `rest`
 * (`steward serve`'s POST /sessions/{id}/events, whose token `by`/`via` name), `ag-ui`, `a2a`,
 * `cli` (`steward send`, `run` and its autopilot), `inspector` (the inspector page), `link` (a
 * decision link: no surface sets it yet). Each surface sets it on the events it builds, and
 * `steward serve` refuses it in a request; an app calling `session.send()` may set it or not
 * (absent: not recorded). The machine never reads it.
 */
export const DECISION_CHANNELS = ['rest', 'ag-ui', 'a2a', 'mcp', 'cli', 'inspector', 'link'] as const;
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];
const through = z.enum(DECISION_CHANNELS).optional();

/**
 * The wait the event answers: its number, as the view (`view.wait`), the `waiting` live event
 * and the protocols' interrupt ids give it. The chart refuses an event that names a wait no
 * longer open (`wait_closed`), so a decision never lands on a later wait than the one it was
 * made for. Left out, the event answers whichever wait is open when it arrives.
 */
const wait = z.number().int().positive().optional();

/**
 * The groups the sender is in, as the surface that authenticated them says: `steward serve`
 * sets it from the caller's token (and refuses it in a request), the CLI and the inspector
 * as `admin`. A wait that names who decides it (a worker's `approvers`, `reviewers`, an
 * escalation) takes a decision only from one of its groups (deadlines.ts: `not_a_decider`).
 */
const groups = CallerGroupsSchema.optional();

/** What every user event may carry besides what it says: when, who (and as which groups), through what, for which wait. */
const decided = { at, by, via, through, wait, groups };

/**
 * The step as the user edited it before approving: a new reason (the worker's task) and/or
 * another of the worker's roles (the guard `editedRoleIsWorkers` checks it is one).
 */
export const StepEdits = z
  .strictObject({
    reason: boundedString(DEFAULT_LIMITS.artifactBodyChars, 'artifactBodyChars').trim().min(1, 'must not be empty').optional(),
    roleId: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  })
  .refine((e) => e.reason !== undefined || e.roleId !== undefined, 'give reason and/or roleId (or leave edits out)');

/**
 * New bodies for tags of the artifact under review, tag → body, with the limits of a
 * worker's submit (DEFAULT_LIMITS: artifactBodyChars per body, tagsPerSubmit tags).
 * ownRecord: a tag named "__proto__" is kept and checked like any other.
 * A blank body is refused: accepted, it would become the tag's latest version, which every
 * later worker reads as its input; to drop a result, reject the artifact instead. The body
 * is kept as written (not trimmed): leading spaces and newlines are Markdown.
 */
const EditedBody = boundedString(DEFAULT_LIMITS.artifactBodyChars, 'artifactBodyChars').refine(
  (body) => body.trim() !== '',
  'must not be empty or only whitespace: write the new body, or reject the artifact to drop it',
);
export const ArtifactEdits = ownRecord(z.string().min(1).max(200), EditedBody)
  .refine((e) => Object.keys(e).length >= 1, 'give at least one tag (or leave edits out)')
  .refine((e) => Object.keys(e).length <= DEFAULT_LIMITS.tagsPerSubmit, `at most ${DEFAULT_LIMITS.tagsPerSubmit} tags (the tagsPerSubmit limit)`);

export const UserSelectedPackage = z.strictObject({ type: z.literal('user_selected_package'), ...decided, packageId: text });
export const UserSubmittedInput = z.strictObject({ type: z.literal('user_submitted_input'), ...decided, text });
export const UserConfirmedIntake = z.strictObject({ type: z.literal('user_confirmed_intake'), ...decided });
/** The step a decision is about, when several wait (a fan-out): the id of its run_worker call, as the view's `team` lists it. */
const item = z.string().trim().min(1, 'must not be empty').max(200).optional();
export const UserApprovedNextStep = z.strictObject({
  type: z.literal('user_approved_next_step'),
  ...decided,
  item,
  edits: StepEdits.optional(),
});
export const UserRejectedNextStep = z.strictObject({
  type: z.literal('user_rejected_next_step'),
  ...decided,
  item,
  reason: z.string().optional(),
});
export const UserAcceptedArtifact = z.strictObject({
  type: z.literal('user_accepted_artifact'),
  ...decided,
  artifactId: text,
  edits: ArtifactEdits.optional(),
});
export const UserRejectedArtifact = z.strictObject({
  type: z.literal('user_rejected_artifact'),
  ...decided,
  artifactId: text,
  reason: z.string().optional(),
});
export const UserAnsweredQuestions = z.strictObject({
  type: z.literal('user_answered_questions'),
  ...decided,
  answers: z.record(z.string(), z.string()).describe('question id (q1, q2, …) → answer'),
});
export const UserSkippedQuestions = z.strictObject({ type: z.literal('user_skipped_questions'), ...decided });

/** A refinement of what a person sends for a tool call (its arguments, a server's answers): bounded as JSON like a model's arguments. */
const withinToolArgumentsChars = [
  (value: unknown) => JSON.stringify(value).length <= DEFAULT_LIMITS.toolArgumentsChars,
  `longer than ${DEFAULT_LIMITS.toolArgumentsChars} characters as JSON (the toolArgumentsChars limit)`,
] as const;

/**
 * A server-tool call's arguments as a person edited them before approving: a JSON object, bounded
 * like a submit's bodies. The runtime checks them against the tool's input schema (the MCP SDK's
 * validator) before the chart sees the event.
 */
export const ToolCallArguments = ownRecord(z.string().min(1).max(200), z.unknown()).refine(...withinToolArgumentsChars);

/**
 * A decision on one server-tool call of the wait `approve_tool`, named by its call id (several
 * calls are decided one by one). In the wait `tool_interrupted` the same decisions say whether
 * the call that was cut off runs again (approve) or not (reject).
 */
export const UserApprovedToolCall = z.strictObject({
  type: z.literal('user_approved_tool_call'),
  ...decided,
  callId: text,
  arguments: ToolCallArguments.optional(),
});
export const UserRejectedToolCall = z.strictObject({
  type: z.literal('user_rejected_tool_call'),
  ...decided,
  callId: text,
  reason: z.string().max(DEFAULT_LIMITS.refusalMessageChars).optional(),
});

/** One value of an elicitation form: the kinds MCP's requested schemas allow (a string, a number, a boolean, a multi-select). */
const FormValue = z.union([z.string().max(DEFAULT_LIMITS.userTextChars), z.number(), z.boolean(), z.array(z.string().max(1_000)).max(1_000)]);

/** A person's answer to one of a server's questions (MCP elicitation): accept with the form's content (none for a URL), decline or cancel. */
export const ToolInputAnswer = z.strictObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: ownRecord(z.string().min(1).max(200), FormValue).optional(),
});

/**
 * The answers to what a call's server asked (the wait `tool_input`), by the key of each of its
 * requests: every request answered. The runtime checks a form's content against the schema the
 * server asked for (the MCP SDK's validator) before the chart sees the event.
 */
export const UserAnsweredToolInput = z.strictObject({
  type: z.literal('user_answered_tool_input'),
  ...decided,
  callId: text,
  responses: ownRecord(z.string().min(1).max(200), ToolInputAnswer)
    .refine((r) => Object.keys(r).length >= 1, "answer each of the call's requests by its key")
    .refine(...withinToolArgumentsChars),
});

/**
 * The result of a call that was cut off (the wait `tool_interrupted`), as a person gives it by
 * hand: the model reads it as the tool's result. (To run the call again, approve it; to skip
 * it, reject it.)
 */
export const UserGaveToolResult = z.strictObject({
  type: z.literal('user_gave_tool_result'),
  ...decided,
  callId: text,
  /** Counted against userTextChars by `session.send()`, like any text a person writes. */
  result: text,
});

export const UserEventSchema = z.discriminatedUnion('type', [
  UserSelectedPackage,
  UserSubmittedInput,
  UserConfirmedIntake,
  UserApprovedNextStep,
  UserRejectedNextStep,
  UserAcceptedArtifact,
  UserRejectedArtifact,
  UserAnsweredQuestions,
  UserSkippedQuestions,
  UserApprovedToolCall,
  UserRejectedToolCall,
  UserAnsweredToolInput,
  UserGaveToolResult,
]);

export type UserEvent = z.infer<typeof UserEventSchema>;
export type UserEventType = UserEvent['type'];

export const userEventTypes = UserEventSchema.options.map((o) => o.shape.type.value) as UserEventType[];

/**
 * Whether `type` names one of the user events (`userEventTypes`).
 *
 * @example
 * if (isUserEventType(button.dataset.event)) actor.send(UserEventSchema.parse({ type: button.dataset.event }));
 */
export function isUserEventType(type: string): type is UserEventType {
  return (userEventTypes as string[]).includes(type);
}
