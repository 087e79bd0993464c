/**
 * PostgresStore's webhook outbox (outbox.ts): the migration, the parallel arrays an entry's
 * messages ride in inside the store's own write statement, and the deliverer's operations. A
 * claim locks due rows FOR UPDATE SKIP LOCKED and pushes them past the claim in the same
 * statement: several servers never send one message at once. New messages are heard through
 * the store's change notifications (`watch`: every committed session write, from any server),
 * not a channel of their own: a server holds at most two LISTEN connections (changes, live
 * events), and the pool's smallest size counts on that. A retried dead letter is found by the
 * deliverer's timer.
 */
import { clip } from '../core/limits.js';
import { toJson } from './store-json.js';
import type { Query } from './postgres-renewals.js';
import { OUTBOX_ERROR_CHARS, type OutboxClaim, type OutboxInput, type OutboxMessage, type OutboxOps, type OutboxStatus } from './outbox.js';

/** The migration step that adds the outbox. */
export const outboxMigration = (S: string) => `
  CREATE TABLE IF NOT EXISTS ${S}.webhook_outbox (
    id          text PRIMARY KEY,
    receiver    text NOT NULL,
    session_id  text NOT NULL,
    entry_seq   integer NOT NULL,
    type        text NOT NULL,
    payload     json NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    status      text NOT NULL DEFAULT 'pending',
    attempts    integer NOT NULL DEFAULT 0,
    next_at     bigint NOT NULL DEFAULT 0,
    last_error  text
  );
  CREATE INDEX IF NOT EXISTS webhook_outbox_due ON ${S}.webhook_outbox (status, next_at);
  -- /healthz, a public route, reads the latest dead letters on each request: it reads those few, never sorts them all.
  CREATE INDEX IF NOT EXISTS webhook_outbox_dead ON ${S}.webhook_outbox (created_at DESC, id DESC) WHERE status = 'dead';`;

/** An entry's messages as the parallel arrays the store's statement unnests (`ord`: the entry's place, 1-based). */
export function outboxColumns(sessionId: string, messages: { input: OutboxInput; ord: number }[]) {
  return {
    ids: messages.map(({ input }) => input.id),
    receivers: messages.map(({ input }) => input.receiver),
    types: messages.map(({ input }) => input.type),
    payloads: messages.map(({ input }) => toJson(input.payload, `the webhook message ${input.id} of session "${sessionId}"`)),
    ords: messages.map(({ ord }) => ord),
  };
}

interface Row {
  id: string;
  receiver: string;
  session_id: string;
  entry_seq: number;
  type: string;
  payload: unknown;
  created_at: Date;
  status: OutboxStatus;
  attempts: number;
  next_at: string;
  last_error: string | null;
}

function toMessage(row: Row): OutboxMessage {
  return {
    id: row.id,
    receiver: row.receiver,
    type: row.type,
    payload: row.payload,
    sessionId: row.session_id,
    entrySeq: row.entry_seq,
    createdAt: row.created_at.toISOString(),
    status: row.status,
    attempts: row.attempts,
    nextAt: Number(row.next_at),
    lastError: row.last_error,
  };
}

export class PgOutbox implements OutboxOps {
  constructor(
    private readonly query: Query,
    private readonly S: string,
    /** The store's `watch`: called after every committed session write, which is when messages are added. */
    private readonly watchChanges: (listener: () => void) => Promise<() => Promise<void>>,
  ) {}

  async claim({ receivers, now, claimMs, limit }: OutboxClaim): Promise<OutboxMessage[]> {
    const { rows } = await this.query<Row>(
      `UPDATE ${this.S}.webhook_outbox o SET next_at = $3 FROM (
         SELECT id FROM ${this.S}.webhook_outbox
         WHERE status = 'pending' AND next_at <= $2 AND receiver = ANY($1::text[])
         ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED
       ) due WHERE o.id = due.id RETURNING o.*`,
      [receivers, now, now + claimMs, limit],
    );
    return rows.map(toMessage).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async delivered(id: string): Promise<void> {
    await this.query(`DELETE FROM ${this.S}.webhook_outbox WHERE id = $1`, [id]);
  }

  async retryLater(id: string, { attempts, nextAt, error }: { attempts: number; nextAt: number; error: string }): Promise<void> {
    await this.query(`UPDATE ${this.S}.webhook_outbox SET attempts = $2, next_at = $3, last_error = $4 WHERE id = $1`, [
      id,
      attempts,
      nextAt,
      clip(error, OUTBOX_ERROR_CHARS),
    ]);
  }

  async deadLetter(id: string, { attempts, error }: { attempts: number; error: string }): Promise<void> {
    await this.query(`UPDATE ${this.S}.webhook_outbox SET status = 'dead', attempts = $2, last_error = $3 WHERE id = $1`, [
      id,
      attempts,
      clip(error, OUTBOX_ERROR_CHARS),
    ]);
  }

  async counts(): Promise<{ pending: number; dead: number }> {
    const { rows } = await this.query<{ pending: string; dead: string }>(
      `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'dead') AS dead FROM ${this.S}.webhook_outbox`,
    );
    return { pending: Number(rows[0]?.pending ?? 0), dead: Number(rows[0]?.dead ?? 0) };
  }

  async deadLetters(limit: number): Promise<OutboxMessage[]> {
    const { rows } = await this.query<Row>(`SELECT * FROM ${this.S}.webhook_outbox WHERE status = 'dead' ORDER BY created_at DESC, id DESC LIMIT $1`, [
      Math.max(0, Math.floor(limit)),
    ]);
    return rows.map(toMessage);
  }

  async retryDead(id: string | undefined, now: number): Promise<number> {
    const { rowCount } = await this.query(
      `UPDATE ${this.S}.webhook_outbox SET status = 'pending', attempts = 0, next_at = $1 WHERE status = 'dead' AND ($2::text IS NULL OR id = $2)`,
      [now, id ?? null],
    );
    return rowCount ?? 0;
  }

  watch(listener: () => void): Promise<() => Promise<void>> {
    return this.watchChanges(listener);
  }
}
