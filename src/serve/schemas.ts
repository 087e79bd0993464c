/**
 * Every body, query and answer of `steward serve`, as zod schemas: the routes validate
 * with them and /openapi.json is generated from them (z.toJSONSchema), so the document and
 * the checks cannot drift apart. User events are the runtime's own UserEventSchema; the error
 * body is src/http/error-body.ts's, the journal entry and session summary src/store/records.ts's.
 */
import * as z from 'zod';
import { DEAD_LETTERS_SHOWN } from '../webhooks/status.js';
import { MaxBurstSchema } from '../core/limits.js';
import { UserEventSchema, userEventTypes } from '../core/machines/session.events.js';
import { WaitingReasonSchema } from '../core/machines/stream-events.js';
import { DEADLINE_OUTCOMES } from '../core/machines/deadlines.js';
import { BRANCH_STATUSES } from '../core/machines/team.js';
import { CURSOR_MAX_CHARS } from '../store/list-page.js';
import { IdempotencyKeySchema } from '../runtime/idempotency-key.js';
import { AuditFormatSchema } from '../runtime/audit-row.js';
import { JournalEntrySchema, SessionSummarySchema } from '../store/records.js';
import { ErrorBody } from '../http/error-body.js';
import { ParticipantsSchema } from '../store/participants.js';

/** Whole numbers in a query string ("10" → 10), with the allowed range in the message. */
const count = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

export const CreateSessionBody = z
  .strictObject({
    packageId: z.string().trim().min(1, 'must not be empty').max(200).optional().describe('skill package; without one the session starts in skill_selection'),
    maxBurst: MaxBurstSchema.optional().describe('LLM rounds allowed between two user actions (default 12)'),
    participants: ParticipantsSchema.optional(),
  })
  .describe("A new session; it belongs to the caller (a named token's name)");

export const ListQuery = z.strictObject(
  {
    limit: count(1, 200).optional().describe('sessions per page (default 50)'),
    cursor: z
      .string()
      .min(1)
      .max(CURSOR_MAX_CHARS)
      .optional()
      .describe('where the page starts: the `next` of the previous page (opaque); none: the first page'),
  },
  {
    // Paging by offset is gone (it read every session): say what replaced it.
    error: (issue) =>
      issue.code === 'unrecognized_keys' && issue.keys.includes('offset')
        ? '`offset` is not supported: page with `cursor`, the `next` of the previous page'
        : undefined,
  },
);

export const JournalQuery = z.strictObject({
  after: count(0, Number.MAX_SAFE_INTEGER).optional().describe('only entries with seq greater than this'),
  limit: count(1, 1000).optional().describe('at most this many entries (default 200)'),
});

export const AuditQuery = z.strictObject({
  format: AuditFormatSchema.optional().describe('jsonl (default: one row per line) or csv (a header, then one row per line)'),
});

export const StreamQuery = z.strictObject({
  after: count(0, Number.MAX_SAFE_INTEGER).optional().describe('resume after this journal seq (the Last-Event-ID header, when sent, wins)'),
  ticket: z.string().min(1).max(2048).optional().describe('a stream ticket (POST /sessions/{id}/stream-tickets) instead of the Authorization header'),
});

/**
 * The `id:` of a stream message, sent back as Last-Event-ID: the journal seq delivered so
 * far, and, once live events were, the last one's run and number (`12`, `12.a1b2c3.40`).
 * Opaque to clients; parsed here only.
 */
export const StreamCursor = z
  .string()
  .trim()
  .regex(/^\d{1,16}(\.[a-z0-9]{1,16}\.\d{1,9})?$/, 'must be the id of a message of this stream')
  .transform((id) => {
    const [seq, run, n] = id.split('.');
    return { after: Number(seq), live: run !== undefined ? { run, n: Number(n) } : null };
  })
  .refine((c) => Number.isSafeInteger(c.after), `its seq must be at most ${Number.MAX_SAFE_INTEGER}`);

// The shapes lower layers own, for the routes and steward/client to import from one place.
export { UserEventSchema, ErrorBody, JournalEntrySchema, SessionSummarySchema };

/** The Idempotency-Key header of POST /sessions/{id}/events: the runtime's key schema. */
export const IdempotencyKeyHeader = IdempotencyKeySchema.describe('a key that makes the send count once (a UUID or ULID)');

/** The runtime's SessionView (src/core/view.ts); the fields a client branches on are spelled out. */
export const SessionViewSchema = z
  .looseObject({
    id: z.string(),
    packageId: z.string().nullable(),
    state: z.string().describe('dotted state, e.g. waiting_user.approve_step'),
    phase: z.enum(['waiting_user', 'running', 'done']),
    waitingReason: WaitingReasonSchema.optional(),
    wait: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("the open wait's number: a decision sends it as `wait`, and is refused (wait_closed) once that wait is no longer open"),
    packageVersion: z.string().nullable().describe('the package version the session is pinned to (sha256 of its manifest and prompts); null: none yet'),
    packageOnDisk: z.string().optional().describe('the version on disk when it differs from the pinned one: `steward upgrade` moves the session to it'),
    approvalRequiredBy: z
      .enum(['policy', 'model'])
      .optional()
      .describe("approve_step: why the step waits — the deployment's approval policy, or the manager asked"),
    deadline: z
      .object({
        level: z.number().int().nonnegative().describe("the rule's place in the wait's deadline chain (0: the first)"),
        outcome: z.enum(DEADLINE_OUTCOMES).describe('what happens when it passes: the wait is rejected, escalated to the group `to`, or people are reminded'),
        after: z.string().describe('the rule\'s interval, e.g. "24h"'),
        to: z.string().nullable().describe('escalate: the group the wait goes to'),
        dueAt: z.string().nullable().describe('when it passes (ISO-8601), as the runtime holding the session computed it; null: not known to this reader'),
      })
      .nullable()
      .describe("the open wait's deadline; null: the session does not wait, or the wait has none"),
    team: z
      .array(
        z.looseObject({
          item: z.string().describe('the run_worker call: a step decision names it as `item`; in a review, decide its `artifact.id`'),
          workerId: z.string(),
          reason: z.string(),
          status: z.enum(BRANCH_STATUSES),
        }),
      )
      .optional()
      .describe(
        'while a fan-out is under way: its workers, each an item decided on its own (proposed, running, submitted: its artifact under review, asked, held)',
      ),
    deciders: z.array(z.string()).nullable().describe('the groups that may decide the open wait (and admin); null: anyone who may decide the session'),
    burst: z.number(),
    maxBurst: z.number(),
    acceptedEvents: z.array(z.enum(userEventTypes as [string, ...string[]])),
    enabledEvents: z.array(z.enum(userEventTypes as [string, ...string[]])).describe('the accepted events the guards allow now: what a UI should offer'),
  })
  .describe('SessionView: see src/core/view.ts for every field');

export const ViewResponse = z.object({ view: SessionViewSchema, revision: z.number().nullable() });

const SendFailure = z.object({
  ok: z.literal(false),
  // Loose: a refusal's details (eventType, state, accepted, enabled; wait and openWait for wait_closed) reach the client.
  error: z.looseObject({ code: z.string(), message: z.string() }),
  view: SessionViewSchema,
  revision: z.number().nullable(),
});

export const SendResultSchema = z
  .union([z.object({ ok: z.literal(true), view: SessionViewSchema, revision: z.number().nullable(), repeated: z.literal(true).optional() }), SendFailure])
  .describe('SendResult: the view once the session waits for you again (or is done)');

/** A send's 400 comes from two places: the server's check of the body, and the session's check of the event. */
export const SendBadRequest = z
  .union([
    ErrorBody.describe('invalid_request: the body is not a user event (the issues say which field), or it sets `via`, `through` or `groups`'),
    SendFailure.describe('invalid_event: the session refused the event (e.g. `by` is a reserved name): the SendResult, state unchanged'),
  ])
  .describe('A failure: { error } when the body is no user event; a SendResult with ok: false when the session refused it');

/** A send's 403 comes from two places: the server's check of the caller, and the session's check of the wait's deciders. */
export const SendForbidden = z
  .union([
    ErrorBody.describe('by_not_allowed, decide_not_allowed: the caller may not send this (nothing was sent)'),
    SendFailure.describe('not_a_decider: the caller is in none of the groups who decide the open wait: the SendResult, state unchanged'),
  ])
  .describe('A refusal of who sent it: { error } before the session saw it; a SendResult with ok: false when the session refused the decider');

export const ListResponse = z.object({
  sessions: z.array(SessionSummarySchema),
  next: z.string().nullable().describe('`cursor` of the next page, null on the last'),
});

export const JournalResponse = z.object({
  entries: z.array(JournalEntrySchema),
  next: z.number().nullable().describe('`after` for the next page, null when there is none yet'),
});

/** A dead letter as a public health check shows it: no receiver URL (it may hold a token), no session, no body. */
const DeadLetterSummary = z.object({
  id: z.string().describe('the webhook-id; retry it with `steward webhooks dead --retry ID`'),
  type: z.string(),
  attempts: z.number(),
  lastError: z.string().nullable().describe('a status code or a network error'),
  createdAt: z.string(),
});

export const HealthResponse = z.object({
  ok: z.boolean(),
  store: z.string().describe('The kind of store: sqlite, postgres or memory'),
  draining: z.boolean(),
  /** A write waits for a lock another process holds (SQLite): momentary, so still `ok`. */
  storeBusy: z.boolean(),
  webhooks: z
    .object({
      receivers: z.number(),
      pending: z.number().describe('messages still to be delivered (every receiver of the store)'),
      dead: z.number().describe('messages given up on after the last try'),
      deadLetters: z.array(DeadLetterSummary).describe(`the ${DEAD_LETTERS_SHOWN} most recent dead letters`),
    })
    .optional()
    .describe('With webhooks (`--webhook`): the outbox; dead letters never make the server unhealthy'),
});

export const StreamTicketBody = z.strictObject({}).describe('Nothing: the ticket is for the session in the path, as the caller who asks');

export const StreamTicketResponse = z.object({
  ticket: z.string().describe('opaque; pass it as `?ticket=` to GET /sessions/{id}/stream (an EventSource cannot send headers)'),
  sessionId: z.string(),
  expiresAt: z.string().describe('ISO time; the ticket opens the stream until then (60 s), reconnects included'),
});

export const SendQuery = z.strictObject({
  wait: z.enum(['true', 'false']).optional().describe('false: answer 202 as soon as the session took the event, like `Prefer: respond-async`'),
});

export const AcceptedResponse = z
  .object({ accepted: z.literal(true), sessionId: z.string(), revision: z.number().nullable() })
  .describe('The session took the event and runs on: the stream and GET /sessions/{id} tell the rest');

export const ForkBody = z
  .strictObject({
    atSeq: z.number().int().min(1).optional().describe("the journal entry to fork after (its `seq`); default: the session's last"),
    id: z.string().min(1).max(200).optional().describe("the fork's id (default: a new one)"),
    participants: ParticipantsSchema.optional().describe(
      "the fork's participants besides its owner, the caller (default: none; the original's are not copied)",
    ),
  })
  .describe("A new session from this one's state after a journal entry; the original is not touched");
