/**
 * The store's records as a client sees them: a journal entry and a session's summary. Types
 * only and nothing of Node, so steward/client (a web page) shares them with the stores
 * (session-store.ts re-exports them) without reaching the store's Node-typed interface.
 */

/** What a journal entry says: the kind, the event and the state after it. */
export interface JournalEntryFields {
  /** 'event' for user events, 'actor' for manager/worker results, 'created' for the first entry. */
  kind: 'created' | 'event' | 'actor';
  /** The event's type, e.g. "user_approved_next_step" or "xstate.done.actor.managerTurn". */
  type: string;
  /** The whole event as JSON-serialisable data. */
  payload: unknown;
  /** The state value after the event, as a dotted string ("waiting_user.review_artifact"). */
  state: string;
}

export interface JournalEntry extends JournalEntryFields {
  sessionId: string;
  /** 1, 2, 3, … without gaps within a session. */
  seq: number;
  /** ISO-8601 time of the write. */
  at: string;
}

export interface SessionSummary {
  id: string;
  packageId: string | null;
  revision: number;
  state: string;
  createdAt: string;
  updatedAt: string;
}
