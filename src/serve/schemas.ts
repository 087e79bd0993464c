/**
 * Every body, query and answer of `steward serve`, as zod schemas: the routes validate
 * with them and /openapi.json is generated from them (z.toJSONSchema), so the document and
 * the checks cannot drift apart. User events are the runtime's own UserEventSchema.
 */
import { z } from 'zod';
import { MaxBurstSchema } from '../limits.js';
import { UserEventSchema, userEventTypes } from '../machines/session.events.js';
import { WaitingReasonSchema } from '../machines/stream-events.js';
import { CURSOR_MAX_CHARS } from '../store/list-page.js';

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
  })
  .describe('A new session');

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

export const StreamQuery = z.strictObject({
  after: count(0, Number.MAX_SAFE_INTEGER).optional().describe('resume after this seq (the Last-Event-ID header does the same)'),
});

export { UserEventSchema };

export const ErrorBody = z
  .object({
    error: z.object({
      code: z
        .string()
        .describe(
          'stable: invalid_request, unauthorized, event_refused, conflict, session_not_found, session_running_elsewhere, lease_lost, server_stopping, …',
        ),
      message: z.string().describe('what is wrong and how to fix it'),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .describe('A failure');

/** The runtime's SessionView (src/runtime/view.ts); the fields a client branches on are spelled out. */
export const SessionViewSchema = z
  .looseObject({
    id: z.string(),
    packageId: z.string().nullable(),
    state: z.string().describe('dotted state, e.g. waiting_user.approve_step'),
    phase: z.enum(['waiting_user', 'running', 'done']),
    waitingReason: WaitingReasonSchema.optional(),
    approvalRequiredBy: z
      .enum(['policy', 'model'])
      .optional()
      .describe("approve_step: why the step waits — the deployment's approval policy, or the manager asked"),
    burst: z.number(),
    maxBurst: z.number(),
    acceptedEvents: z.array(z.enum(userEventTypes as [string, ...string[]])),
  })
  .describe('SessionView: see src/runtime/view.ts for every field');

export const ViewResponse = z.object({ view: SessionViewSchema, revision: z.number().nullable() });

const SendFailure = z.object({
  ok: z.literal(false),
  error: z.object({ code: z.string(), message: z.string() }),
  view: SessionViewSchema,
  revision: z.number().nullable(),
});

export const SendResultSchema = z
  .union([z.object({ ok: z.literal(true), view: SessionViewSchema, revision: z.number().nullable() }), SendFailure])
  .describe('SendResult: the view once the session waits for you again (or is done)');

/** A send's 400 comes from two places: the server's check of the body, and the session's check of the event. */
export const SendBadRequest = z
  .union([
    ErrorBody.describe('invalid_request: the body is not a user event (the issues say which field), or it sets `via`'),
    SendFailure.describe('invalid_event: the session refused the event (e.g. `by` is a reserved name): the SendResult, state unchanged'),
  ])
  .describe('A failure: { error } when the body is no user event; a SendResult with ok: false when the session refused it');

export const SessionSummarySchema = z.object({
  id: z.string(),
  packageId: z.string().nullable(),
  revision: z.number(),
  state: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ListResponse = z.object({
  sessions: z.array(SessionSummarySchema),
  next: z.string().nullable().describe('`cursor` of the next page, null on the last'),
});

export const JournalEntrySchema = z.object({
  sessionId: z.string(),
  seq: z.number(),
  at: z.string(),
  kind: z.enum(['created', 'event', 'actor']),
  type: z.string(),
  payload: z.unknown(),
  state: z.string(),
});

export const JournalResponse = z.object({
  entries: z.array(JournalEntrySchema),
  next: z.number().nullable().describe('`after` for the next page, null when there is none yet'),
});

export const HealthResponse = z.object({
  ok: z.boolean(),
  store: z.string().describe('The kind of store: sqlite, postgres or memory'),
  draining: z.boolean(),
  /** A write waits for a lock another process holds (SQLite): momentary, so still `ok`. */
  storeBusy: z.boolean(),
});
