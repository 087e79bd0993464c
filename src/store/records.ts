/**
 * The store's records as a client sees them: a journal entry and a session's summary, as zod
 * schemas (the wire shapes `steward serve` answers and steward/client checks) with their types
 * inferred. zod and nothing of Node, so steward/client (a web page) shares them with the stores
 * (session-store.ts re-exports them) without reaching the store's Node-typed interface.
 */
import * as z from 'zod';

/** What a journal entry says: the kind, the event and the state after it. */
export const JournalEntryFieldsSchema = z.object({
  /** 'event' for user events, 'actor' for manager/worker results, 'created' for the first entry. */
  kind: z.enum(['created', 'event', 'actor']),
  /** The event's type, e.g. "user_approved_next_step" or "xstate.done.actor.managerTurn". */
  type: z.string(),
  /** The whole event as JSON-serialisable data. */
  payload: z.unknown(),
  /** The state value after the event, as a dotted string ("waiting_user.review_artifact"). */
  state: z.string(),
});

export type JournalEntryFields = z.infer<typeof JournalEntryFieldsSchema>;

export const JournalEntrySchema = z.object({
  sessionId: z.string(),
  /** 1, 2, 3, … without gaps within a session. */
  seq: z.number(),
  /** ISO-8601 time of the write. */
  at: z.string(),
  ...JournalEntryFieldsSchema.shape,
});

export type JournalEntry = z.infer<typeof JournalEntrySchema>;

export const SessionSummarySchema = z.object({
  id: z.string(),
  packageId: z.string().nullable(),
  revision: z.number(),
  state: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The name of the caller who created it; null when no named caller did (the CLI, a shared token, no tokens). Absent from an older server: null. */
  owner: z.string().nullable().default(null),
  /** People (names) and groups (`group:NAME`) who see and decide it besides its owner. Absent from an older server: none. */
  participants: z.array(z.string()).default([]),
});

export type SessionSummary = z.infer<typeof SessionSummarySchema>;
