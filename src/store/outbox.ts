/**
 * The webhook outbox a store keeps (docs/design.md §8, "Webhooks"): one message per (event,
 * receiver), written by `create`/`append` in the transaction of the journal entry whose event
 * caused it (`JournalEntryInput.outbox`), so a message exists exactly when its entry does. A
 * deliverer (src/webhooks/deliverer.ts) claims the due ones, posts them, and deletes a message
 * its receiver acknowledged, reschedules one it did not, or keeps it as a dead letter after
 * the last try. Times are epoch milliseconds the deliverer passes in (its clock, so tests use a
 * fake one); a claim pushes `nextAt` forward, so a deliverer that dies mid-post leaves the
 * message due again once the claim runs out.
 */

/** A webhook message as the runtime hands it to the store, with its journal entry. */
export interface OutboxInput {
  /** The message's id (`msg_…`): the `webhook-id` of every try, so a receiver drops repeats by it. */
  id: string;
  /** Where it goes: the receiver's URL. */
  receiver: string;
  /** The webhook event type, e.g. "session.waiting" (src/webhooks/events.ts). */
  type: string;
  /** The body, JSON-serialisable and bounded by the runtime. */
  payload: unknown;
}

export type OutboxStatus = 'pending' | 'dead';

/** A stored webhook message: still to be delivered (`pending`) or given up on (`dead`). */
export interface OutboxMessage extends OutboxInput {
  sessionId: string;
  /** The journal entry that caused it. */
  entrySeq: number;
  /** ISO-8601 time of the write. */
  createdAt: string;
  status: OutboxStatus;
  /** Tries made so far. */
  attempts: number;
  /** When it is due (epoch ms): the next try, or the end of a claim under way. */
  nextAt: number;
  /** Why the last try failed (a status code or a network error; never a response body). */
  lastError: string | null;
}

export interface OutboxClaim {
  /** Only messages to these receivers (the ones this deliverer has secrets for). */
  receivers: readonly string[];
  /** The deliverer's clock now (epoch ms): messages with `nextAt` ≤ now are due. */
  now: number;
  /** How long the claim holds (ms): another deliverer takes the message only after it. */
  claimMs: number;
  limit: number;
}

/** A store's outbox operations (every store of Steward has them; another store may leave them out: no webhooks then). */
export interface OutboxOps {
  /**
   * Claims up to `limit` due pending messages (oldest due first) by moving their `nextAt` to
   * `now + claimMs`, and returns them. PostgreSQL locks the rows FOR UPDATE SKIP LOCKED, so two
   * servers never claim one message at once; SQLite claims under its write lock.
   */
  claim(claim: OutboxClaim): Promise<OutboxMessage[]>;
  /** The receiver acknowledged it: the message is removed. */
  delivered(id: string): Promise<void>;
  /** A try failed: tried `attempts` times, due again at `nextAt`. */
  retryLater(id: string, update: { attempts: number; nextAt: number; error: string }): Promise<void>;
  /** The last try failed: kept as a dead letter until retried. */
  deadLetter(id: string, update: { attempts: number; error: string }): Promise<void>;
  /** Messages still to be delivered and dead letters, counted. */
  counts(): Promise<{ pending: number; dead: number }>;
  /** Dead letters, most recent first, at most `limit`. */
  deadLetters(limit: number): Promise<OutboxMessage[]>;
  /** A dead letter (undefined: every one) made pending again, due at `now` with its tries reset; how many were. */
  retryDead(id: string | undefined, now: number): Promise<number>;
  /**
   * Calls `listener` after a commit that wrote messages (PostgreSQL: after any process's
   * session write, by the store's change notifications; SQLite and memory: after this store
   * object's commits that added messages). Resolves once listening.
   */
  watch(listener: () => void): Promise<() => Promise<void>>;
}

/** How long a failure reason a store keeps. */
export const OUTBOX_ERROR_CHARS = 500;
