/**
 * One row of a session's audit trail: a decision that answered a wait, or a deadline that
 * ended one (rejected it, or handed it to another group), with the wait, who decided and through what, what they decided, and a
 * hash of what they were shown. The one schema of a row: `steward audit`, `GET
 * /sessions/{id}/audit` and their CSV columns (in this order) all come from it. zod and
 * nothing of Node, so a client can check what it reads.
 */
import * as z from 'zod';
import { DECISION_CHANNELS } from '../core/machines/session.events.js';
import { WaitingReasonSchema } from '../core/machines/stream-events.js';

/**
 * What a row's decision was. A person's: the word of the user event (a tool call's as the
 * chart's `tool_call_decided` says it). A deadline's (`by: steward`, `through: deadline`):
 * `expired` (nobody decided in time: the wait was answered no, never yes) or `escalated`
 * (the wait went to another group, named in `details.to`, as a new wait).
 */
export const AuditDecisionSchema = z.enum([
  'selected',
  'submitted',
  'confirmed',
  'approved',
  'rejected',
  'accepted',
  'answered',
  'skipped',
  'result_given',
  'expired',
  'escalated',
]);
export type AuditDecision = z.infer<typeof AuditDecisionSchema>;

/**
 * Through what a decision came: a surface's `through` on the journalled user event, or
 * `deadline` for a wait that ended by its deadline (`by: steward`). Null: not recorded (an
 * app's own `session.send()`, or a session journalled before surfaces were recorded).
 */
export const AuditThroughSchema = z.enum([...DECISION_CHANNELS, 'deadline']);

const when = z.string().describe('ISO-8601 time');
const seq = z.number().int().positive();

export const AuditRowSchema = z.strictObject({
  sessionId: z.string(),
  /** The wait's number (the view's `wait`; a decision names it as `wait`). */
  wait: z.number().int().positive(),
  waitingReason: WaitingReasonSchema,
  /** The journal entry whose event opened the wait (1 for a wait open at creation or at a fork's start), and its time. */
  openedSeq: seq,
  openedAt: when,
  /** The decision's journal entry, and when the session took it (the event's own time). */
  decidedSeq: seq,
  decidedAt: when,
  /** When the wait closed; null while it is open (a tool wait stays open until each of its calls is decided). */
  closedSeq: seq.nullable(),
  closedAt: when.nullable(),
  /** Who decided (the event's `by`; null: the event named nobody) and the token that sent it for them (`via`). */
  by: z.string().nullable(),
  via: z.string().nullable(),
  /** The groups they decided as, as the surface that authenticated them stamped it (`groups`; null: none recorded). */
  groups: z.array(z.string()).nullable(),
  through: AuditThroughSchema.nullable(),
  /** The user event, e.g. "user_approved_next_step"; `deadline_passed` for a deadline's. */
  event: z.string(),
  decision: AuditDecisionSchema,
  /** What was decided on: the step's worker (approve_step), the artifact (review_artifact, revision), the call (tool waits); else null. */
  subject: z.string().nullable(),
  /** The person's edits: a step's (reason, roleId), an artifact's (tag → body), a tool call's arguments; null: none. */
  edits: z.record(z.string(), z.unknown()).nullable(),
  /**
   * The rest the decision said: a reason for rejecting, answers, a text, a server's answers, a
   * result given; a deadline's rule (`level`, `after`, and `to`: the group an escalation went to); null: nothing.
   */
  details: z.record(z.string(), z.unknown()).nullable(),
  /** sha256 (hex) of the canonical JSON of what the wait showed when it opened (`shownAtWait`, docs/design.md "Audit trail"). */
  shownSha256: z.string().regex(/^[0-9a-f]{64}$/),
});

export type AuditRow = z.infer<typeof AuditRowSchema>;

/** How a trail is written: JSON Lines or CSV (audit-output.ts). */
export const AuditFormatSchema = z.enum(['jsonl', 'csv']);
export type AuditFormat = z.infer<typeof AuditFormatSchema>;

/** The CSV columns, in the schema's order. */
export const AUDIT_COLUMNS = Object.keys(AuditRowSchema.shape) as (keyof AuditRow)[];
