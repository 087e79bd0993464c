/**
 * Waits that end on time, and who may decide a wait. A wait may have a deadline: a chain of
 * rules, each an interval (`after`, from when the rule starts) and what happens when it
 * passes — `reject` (the wait is answered no: an expired approval is a rejection, never an
 * approval), `escalate` (the wait re-opens for another group, with the next rule), `remind`
 * (people are told again; nothing changes, the next rule starts). A reminder before a
 * deadline is a `remind` rule before it in the chain.
 *
 * The chart never reads a clock. It keeps, for the open wait, which rule of the chain is
 * current (`level`) and what it says; the runtime that holds the session turns that into a
 * due time in the store and, when the time comes, sends `deadline_passed` naming the wait
 * and the level. A deadline event for a wait or a level that is no longer current is refused,
 * so a timer fired twice (two servers, a restart) changes nothing the second time.
 *
 * Who decides: a worker's front matter may name groups — `approvers` for its steps (and the
 * tool calls it makes), `reviewers` for its artifacts — and an escalation names the group the
 * wait goes to. A decision for such a wait must come from a member of one of them (or of the
 * `admin` group); anyone else's is refused (`not_a_decider`). Who is in which group is what
 * the surface that authenticated the person says: it stamps the event's `groups`.
 */
import * as z from 'zod';
import { ownRecord } from '../blackboard/keyed.js';
import type { PackageInfo, SessionContext } from './session.context.js';
import { WaitingReasonSchema, type WaitingReason } from './stream-events.js';

/** The group whose members see and decide every session and every wait. */
export const ADMIN_GROUP = 'admin';
/** The longest group name. */
export const MAX_GROUP_NAME_CHARS = 64;
/** Groups one person may be in, at most (an event's `groups`, a stream ticket's). */
export const MAX_CALLER_GROUPS = 64;
/** Groups a wait may name as its deciders, at most. */
const MAX_DECIDER_GROUPS = 16;
/** The guard of the refusal edge a decision wait has second, after the closed-wait one (session.guards.ts). */
export const DECIDER_GUARD = 'notADecider';
/** Rules one deadline chain may hold, at most. */
export const MAX_DEADLINE_RULES = 8;

const visibleGroup = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\s,]+$/u;

/** A group's name (a token list's `groups=`, an app's caller's `groups`, front matter `approvers`): no spaces, no comma, nothing invisible. */
export const GroupNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_GROUP_NAME_CHARS, `must be at most ${MAX_GROUP_NAME_CHARS} characters`)
  .regex(visibleGroup, 'must have no control or invisible characters, no spaces and no comma');

/** The groups that may decide a worker's waits (front matter `approvers`, `reviewers`). */
export const DeciderGroupsSchema = z
  .array(GroupNameSchema)
  .min(1, 'must name at least one group (or leave the field out: then anyone who may see the session decides)')
  .max(MAX_DECIDER_GROUPS, `must name at most ${MAX_DECIDER_GROUPS} groups`)
  .transform((groups) => [...new Set(groups)]);

/** The groups a person is in, as the surface that authenticated them stamps them on a decision. */
export const CallerGroupsSchema = z.array(GroupNameSchema).max(MAX_CALLER_GROUPS);

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** The longest interval a rule may have (a year): longer is surely a typo. */
const MAX_INTERVAL_MS = 366 * UNIT_MS.d;

/**
 * An interval as written in front matter, a manifest or an option: a whole number and a unit,
 * `90s`, `30m`, `24h`, `7d`. Written by hand here: the only format is this one, and a library
 * that also reads "1 week" would accept what the docs do not promise.
 */
const INTERVAL_HINT = 'must be a whole number and a unit, like "90s", "30m", "24h" or "7d"';
/** A whole number (no leading zero, at most 7 digits) and a unit: s, m, h or d. */
export const INTERVAL_PATTERN = /^[1-9]\d{0,6}(s|m|h|d)$/;
export const IntervalSchema = z
  .string({ error: INTERVAL_HINT })
  .regex(INTERVAL_PATTERN, INTERVAL_HINT)
  .refine((text) => intervalMs(text) <= MAX_INTERVAL_MS, 'must be at most 366 days');

/**
 * The milliseconds of an interval that INTERVAL_PATTERN matched (IntervalSchema, a link's expiresIn).
 *
 * @example
 * intervalMs('30m'); // 1_800_000
 */
export function intervalMs(text: string): number {
  const unit = text.slice(-1) as keyof typeof UNIT_MS;
  return Number(text.slice(0, -1)) * UNIT_MS[unit];
}

export const DEADLINE_OUTCOMES = ['reject', 'escalate', 'remind'] as const;
export type DeadlineOutcome = (typeof DEADLINE_OUTCOMES)[number];

/** The waits a deadline may answer for a person (reject) or hand to another group (escalate): the decisions. */
export const DECISION_WAITS = ['approve_step', 'review_artifact', 'approve_tool'] as const satisfies readonly WaitingReason[];
const isDecisionWait = (reason: string) => (DECISION_WAITS as readonly string[]).includes(reason);
/**
 * The waits a worker's groups decide: its step, its artifacts, and every wait of its tool calls
 * (approving them, answering what their server asks, settling one cut off) — each can put a
 * side effect or text of the decider's choosing into the work.
 */
const WORKER_WAITS: ReadonlySet<string> = new Set([...DECISION_WAITS, 'tool_input', 'tool_interrupted'] satisfies WaitingReason[]);
const WAIT_REASONS: ReadonlySet<string> = new Set(WaitingReasonSchema.options);

/** One rule of a deadline chain, and the rule after it (the chain's next link). */
export interface DeadlineRule {
  after: string;
  outcome: DeadlineOutcome;
  /** With `escalate`: the group the wait goes to. */
  to?: string;
  then?: DeadlineRule;
}

const RuleSchema: z.ZodType<DeadlineRule> = z.lazy(() =>
  z
    .strictObject(
      {
        after: IntervalSchema,
        outcome: z.enum(DEADLINE_OUTCOMES, { error: 'must be "reject", "escalate" (with "to": a group) or "remind"' }).default('reject'),
        to: GroupNameSchema.optional(),
        then: RuleSchema.optional(),
      },
      // Read after a field's name, as the package format's messages are ("field "deadlines.approve_step" must be …").
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys'
            ? `has unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}: a rule has after, outcome, to and then`
            : `must be a rule like { "after": "24h", "outcome": "reject" }`,
      },
    )
    .refine((rule) => (rule.outcome === 'escalate') === (rule.to !== undefined), {
      error: 'an "escalate" rule names the group the wait goes to ("to"), and only it does',
    }),
);

function rulesOf(rule: DeadlineRule | undefined): DeadlineRule[] {
  const rules: DeadlineRule[] = [];
  for (let r = rule; r; r = r.then) rules.push(r);
  return rules;
}

/**
 * Deadlines by waiting reason, as a manifest (`deadlines`), a worker's front matter or
 * `createRuntime({ deadlines })` write them. Reject and escalate only where a decision is
 * waited for; any wait may remind.
 */
// ownRecord: z.record would drop a key named "__proto__" unseen; this one is refused as the wait it is not.
export const DeadlinesSchema = ownRecord(z.string(), RuleSchema)
  .superRefine((policy, ctx) => {
    for (const [reason, rule] of Object.entries(policy)) {
      const rules = rulesOf(rule);
      if (rules.length > MAX_DEADLINE_RULES) ctx.addIssue({ code: 'custom', path: [reason], message: `chains at most ${MAX_DEADLINE_RULES} rules` });
      if (!isDecisionWait(reason) && rules.some((r) => r.outcome !== 'remind')) {
        ctx.addIssue({
          code: 'custom',
          path: [reason],
          message: `"${reason}" waits for no decision a deadline can make: only "remind" applies there (reject and escalate apply to ${DECISION_WAITS.join(', ')})`,
        });
      }
    }
  })
  .refine((policy) => Object.keys(policy).every((reason) => WAIT_REASONS.has(reason)), {
    error: (issue) =>
      `names a wait Steward does not have (${Object.keys(issue.input as object)
        .filter((r) => !WAIT_REASONS.has(r))
        .join(', ')}); the waits are ${[...WAIT_REASONS].join(', ')}`,
  });

export type DeadlinePolicy = Partial<Record<WaitingReason, DeadlineRule>>;

/** The rule of the open wait's deadline that is current: its place in the chain, and what it says. */
export interface OpenDeadline {
  /** 0 for the chain's first rule; each rule that passes moves on to the next. */
  level: number;
  after: string;
  outcome: DeadlineOutcome;
  to?: string;
}

/** What a rule of a chain is, as the open wait keeps it (null: the chain has ended). */
function openRule(rule: DeadlineRule | undefined, level: number): OpenDeadline | null {
  if (!rule) return null;
  return { level, after: rule.after, outcome: rule.outcome, ...(rule.to ? { to: rule.to } : {}) };
}

/** The chain that applies to a wait: the waited-on worker's front matter first, then the package's. */
function chainFor(context: SessionContext, reason: WaitingReason): DeadlineRule | undefined {
  const worker = workerOfWait(context, reason);
  return worker?.deadlines?.[reason] ?? context.package?.deadlines?.[reason];
}

/** The worker a wait is about: the step's (WORKER_WAITS). */
function workerOfWait(context: SessionContext, reason: WaitingReason): PackageInfo['workers'][number] | undefined {
  if (!WORKER_WAITS.has(reason) || !context.step) return undefined;
  return context.package?.workers.find((w) => w.id === context.step!.workerId);
}

/**
 * The deadline and the deciders of a wait as it opens: the first rule of its chain, and the
 * groups its worker's front matter names.
 *
 * @example
 * const { deadline, deciders } = waitTerms(context, 'approve_step'); // { deadline: { level: 0, after: '24h', outcome: 'reject' }, deciders: ['ops'] }
 */
export function waitTerms(context: SessionContext, reason: WaitingReason): { deadline: OpenDeadline | null; deciders: string[] | null } {
  const worker = workerOfWait(context, reason);
  const deciders = reason === 'review_artifact' ? worker?.reviewers : worker?.approvers;
  return { deadline: openRule(chainFor(context, reason), 0), deciders: deciders?.length ? [...deciders] : null };
}

/**
 * The rule after the current one of the open wait's chain (null: none).
 *
 * @example
 * nextDeadline(context, 'approve_step'); // { level: 1, after: '4h', outcome: 'reject' } after an escalation
 */
export function nextDeadline(context: SessionContext, reason: WaitingReason): OpenDeadline | null {
  const current = context.waits.deadline;
  if (!current) return null;
  const rules = rulesOf(chainFor(context, reason));
  return openRule(rules[current.level + 1], current.level + 1);
}

/** A deadline event as the runtime sends it: the wait and the rule it is for; journalled by Steward, through its deadline. */
export interface DeadlinePassedEvent {
  type: 'deadline_passed';
  wait: number;
  level: number;
  at?: string;
  by?: 'steward';
  through?: 'deadline';
}

/**
 * Whether a deadline event is for the open wait's current rule (false: the wait was answered,
 * escalated or reminded since, or no wait is open).
 *
 * @example
 * if (isCurrentDeadline(context, event, true) && context.waits.deadline?.outcome === 'reject') …
 */
export function isCurrentDeadline(context: SessionContext, event: { type: string }, open: boolean): boolean {
  if (event.type !== 'deadline_passed' || !open) return false;
  const { wait, level } = event as DeadlinePassedEvent;
  return wait === context.waits.opened && context.waits.deadline?.level === level;
}

/** Why a deadline event that is not current is refused. */
export function staleDeadlineMessage(context: SessionContext, event: DeadlinePassedEvent): string {
  const current = context.waits.deadline;
  if (event.wait !== context.waits.opened)
    return `The deadline of wait ${event.wait} was not applied: that wait is no longer open (wait ${context.waits.opened} is).`;
  return current
    ? `The deadline of wait ${event.wait} at rule ${event.level} was not applied: rule ${current.level} is current (it passed already).`
    : `The deadline of wait ${event.wait} was not applied: the wait has no deadline left.`;
}

/**
 * Whether the person who sent a decision may decide the open wait: anyone when it names no
 * deciders; else a member of one of its groups or of `admin`.
 *
 * @example
 * mayDecide(context, { type: 'user_approved_next_step', groups: ['ops'] }); // true when the wait's deciders include ops
 */
export function mayDecide(context: SessionContext, event: { type: string }): boolean {
  const deciders = decidersOf(context, event);
  if (!deciders) return true;
  const groups = (event as { groups?: unknown }).groups;
  return Array.isArray(groups) && groups.some((g) => g === ADMIN_GROUP || deciders.includes(g as string));
}

/** Why a decision by someone else is refused, naming who may decide. */
export function notADeciderMessage(context: SessionContext, event: { type: string; by?: unknown }): string {
  const who = typeof event.by === 'string' ? `"${event.by}"` : 'The sender';
  const groups = (decidersOf(context, event) ?? []).join(', ');
  const what = context.waits.deciders ? `wait ${context.waits.opened}` : `this item of wait ${context.waits.opened}`;
  return `${who} may not decide ${what}: only the groups ${groups} (or ${ADMIN_GROUP}) may. "${event.type}" was not applied; ask one of them.`;
}

/**
 * Who may decide what the event decides: the open wait's groups (its worker's, or an
 * escalation's); in a fan-out, whose items each belong to a worker, the groups of the item's
 * worker (`approvers` for its step, `reviewers` for its artifact). Null: anyone.
 */
function decidersOf(context: SessionContext, event: { type: string }): string[] | null {
  if (context.waits.deciders) return context.waits.deciders;
  const { item, artifactId } = event as { item?: unknown; artifactId?: unknown };
  const branches = context.team?.branches ?? [];
  const byItem = typeof item === 'string' ? branches.find((b) => b.item === item) : undefined;
  const byArtifact = typeof artifactId === 'string' ? branches.find((b) => b.artifactId === artifactId) : undefined;
  const branch = byItem ?? byArtifact;
  const worker = branch && context.package?.workers.find((w) => w.id === branch.step.workerId);
  const groups = byItem ? worker?.approvers : worker?.reviewers;
  return groups?.length ? groups : null;
}
