/**
 * SqliteStore's webhook outbox (outbox.ts): the table (schema v6), the row an entry's message
 * becomes inside the store's write transactions, and the deliverer's operations. Every
 * operation runs through the store's `guard` (waits for another process's lock without
 * blocking), and a claim is one IMMEDIATE transaction, so two processes on one file never
 * claim one message at once.
 */
import type Database from 'better-sqlite3';
import { clip } from '../core/limits.js';
import { toJson } from './store-json.js';
import { OUTBOX_ERROR_CHARS, type OutboxClaim, type OutboxInput, type OutboxMessage, type OutboxOps, type OutboxStatus } from './outbox.js';
import { parseJson } from './sqlite-schema.js';

export interface OutboxRow {
  id: string;
  receiver: string;
  session_id: string;
  entry_seq: number;
  type: string;
  payload: string;
  created_at: string;
}

/** An entry's messages as rows, serialised outside the transaction (a bad payload fails before any lock). */
export function toOutboxRows(sessionId: string, entrySeq: number, at: string, inputs: readonly OutboxInput[] | undefined): OutboxRow[] {
  return (inputs ?? []).map((input) => ({
    id: input.id,
    receiver: input.receiver,
    session_id: sessionId,
    entry_seq: entrySeq,
    type: input.type,
    payload: toJson(input.payload, `the webhook message ${input.id} of session "${sessionId}"`),
    created_at: at,
  }));
}

/** The insert the store's write transactions run for each message. */
export const insertOutboxSql = `INSERT INTO webhook_outbox (id, receiver, session_id, entry_seq, type, payload, created_at)
  VALUES (@id, @receiver, @session_id, @entry_seq, @type, @payload, @created_at)`;

interface StoredRow extends OutboxRow {
  status: OutboxStatus;
  attempts: number;
  next_at: number;
  last_error: string | null;
}

function toMessage(row: StoredRow): OutboxMessage {
  return {
    id: row.id,
    receiver: row.receiver,
    type: row.type,
    payload: parseJson(row.payload, () => `Webhook message ${row.id} holds corrupt JSON`),
    sessionId: row.session_id,
    entrySeq: row.entry_seq,
    createdAt: row.created_at,
    status: row.status,
    attempts: row.attempts,
    nextAt: row.next_at,
    lastError: row.last_error,
  };
}

function prepare(db: Database.Database) {
  const s = {
    due: db.prepare<[number, number], StoredRow>(`SELECT * FROM webhook_outbox WHERE status = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?`),
    claimOne: db.prepare<[number, string]>(`UPDATE webhook_outbox SET next_at = ? WHERE id = ?`),
    remove: db.prepare<[string]>(`DELETE FROM webhook_outbox WHERE id = ?`),
    retry: db.prepare<[number, number, string, string]>(`UPDATE webhook_outbox SET attempts = ?, next_at = ?, last_error = ? WHERE id = ?`),
    dead: db.prepare<[number, string, string]>(`UPDATE webhook_outbox SET status = 'dead', attempts = ?, last_error = ? WHERE id = ?`),
    counts: db.prepare<[], { pending: number; dead: number }>(
      `SELECT COALESCE(SUM(status = 'pending'), 0) AS pending, COALESCE(SUM(status = 'dead'), 0) AS dead FROM webhook_outbox`,
    ),
    deadLetters: db.prepare<[number], StoredRow>(`SELECT * FROM webhook_outbox WHERE status = 'dead' ORDER BY created_at DESC, id DESC LIMIT ?`),
    retryDead: db.prepare<[number, string | null, string | null]>(
      `UPDATE webhook_outbox SET status = 'pending', attempts = 0, next_at = ? WHERE status = 'dead' AND (? IS NULL OR id = ?)`,
    ),
  };
  // Ordered by the index on (status, next_at); due rows of other receivers are skipped in
  // JavaScript (a deliverer knows a few receivers at most), so a few more are read than taken.
  const claim = db.transaction((now: number, until: number, limit: number, wanted: ReadonlySet<string>) => {
    const rows = s.due
      .all(now, limit * 4 + 16)
      .filter((row) => wanted.has(row.receiver))
      .slice(0, limit);
    for (const row of rows) s.claimOne.run(until, row.id);
    return rows;
  }).immediate;
  return { ...s, claim };
}

export class SqliteOutbox implements OutboxOps {
  private stmts: ReturnType<typeof prepare> | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly db: () => Database.Database,
    /** The store's guard: runs `work` once no other process holds the lock; SQLite's failures become StoreErrors. */
    private readonly guard: <T>(work: () => T) => Promise<T>,
  ) {}

  private get s(): ReturnType<typeof prepare> {
    return (this.stmts ??= prepare(this.db()));
  }

  /** The store committed messages: wake this process's deliverer. */
  wake(): void {
    for (const listener of [...this.listeners]) queueMicrotask(listener);
  }

  async claim({ receivers, now, claimMs, limit }: OutboxClaim): Promise<OutboxMessage[]> {
    const wanted = new Set(receivers);
    const rows = await this.guard(() => this.s.claim(now, now + claimMs, limit, wanted));
    return rows.map((row) => ({ ...toMessage(row), nextAt: now + claimMs }));
  }

  async delivered(id: string): Promise<void> {
    await this.guard(() => this.s.remove.run(id));
  }

  async retryLater(id: string, { attempts, nextAt, error }: { attempts: number; nextAt: number; error: string }): Promise<void> {
    await this.guard(() => this.s.retry.run(attempts, nextAt, clip(error, OUTBOX_ERROR_CHARS), id));
  }

  async deadLetter(id: string, { attempts, error }: { attempts: number; error: string }): Promise<void> {
    await this.guard(() => this.s.dead.run(attempts, clip(error, OUTBOX_ERROR_CHARS), id));
  }

  private missingTable: boolean | undefined;

  /**
   * A file read-only at schema v5 or before has no outbox: it reads as empty. Asked once, as the
   * store decides its other reads by the schema it opened (and `/healthz` asks on each request).
   */
  private get missing(): boolean {
    return (this.missingTable ??= (this.db().pragma('user_version', { simple: true }) as number) < 6);
  }

  async counts(): Promise<{ pending: number; dead: number }> {
    if (this.missing) return { pending: 0, dead: 0 };
    const row = await this.guard(() => this.s.counts.get());
    return { pending: Number(row?.pending ?? 0), dead: Number(row?.dead ?? 0) };
  }

  async deadLetters(limit: number): Promise<OutboxMessage[]> {
    if (this.missing) return [];
    return (await this.guard(() => this.s.deadLetters.all(Math.max(0, Math.floor(limit))))).map(toMessage);
  }

  async retryDead(id: string | undefined, now: number): Promise<number> {
    const { changes } = await this.guard(() => this.s.retryDead.run(now, id ?? null, id ?? null));
    if (changes) this.wake();
    return changes;
  }

  async watch(listener: () => void): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }
}
