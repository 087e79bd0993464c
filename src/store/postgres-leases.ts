/**
 * Leases on PostgreSQL: the `leases` table of migration step 2, one row per session ever
 * leased (owner, token, expires_at). Every time is the database's `now()`, so the clocks of
 * the servers never matter. The protocol (docs/design.md "Leases and takeover"):
 * - acquire: an upsert that succeeds only when no unexpired lease exists, and bumps the token;
 *   or when the unexpired one is still the grant of a holder its caller knows is gone;
 * - every grant records the granted process (holder-process.ts), tagged with its token;
 * - renew: extends only the caller's own unexpired grant (same owner and token);
 * - release: expires the grant at once, so another server may take a running session now
 *   (an unused grant expires as of the session's last write: see claimExpired);
 * - claimExpired: running sessions nobody holds an unexpired lease on whose runner is gone:
 *   the last write was made under a lease (the fence makes `updated_at < expires_at` mean
 *   exactly that) that has expired since, or it was made without one over a lease ago; their
 *   rows locked FOR UPDATE SKIP LOCKED, so two scanning servers never both claim one; the
 *   upsert's own WHERE makes a racing acquire lose too;
 * - the fence on writes lives in PostgresStore.append (see fenceSql).
 * - renew goes through postgres-renewals.ts (its own connection, batched).
 */
import { SessionNotFoundError, UserError } from '../core/errors.js';
import { HolderProcessSchema, type HolderProcess } from './holder-process.js';
import type { AcquiringAppend, AppendInput, ClaimedLease, Lease, LeaseHolder, LeasedLoad, LeaseOps } from './session-store.js';
import type { WriteGrant } from './postgres-append.js';
import { sessionColumns, toStoredSession, type SessionRow } from './postgres-rows.js';
import type { PgRenewals, Query } from './postgres-renewals.js';

/** Migration step 2 (schema version 1 → 2). */
export function leasesMigration(S: string): string {
  return `
    CREATE TABLE ${S}.leases (
      session_id  text PRIMARY KEY REFERENCES ${S}.sessions(id),
      owner       text NOT NULL,
      token       bigint NOT NULL,
      expires_at  timestamptz NOT NULL
    );
    -- The takeover scan reads only running sessions.
    CREATE INDEX sessions_running ON ${S}.sessions (updated_at) WHERE state LIKE 'running%';`;
}

/**
 * Migration step 6 (schema version 5 → 6): the holder's process (holder-process.ts), as JSON
 * with the token of the grant that wrote it. A process that writes none (an older Steward
 * still running) bumps the token and leaves the old JSON behind, whose token then no longer
 * matches: it is never read as that holder's.
 */
export function leaseProcessMigration(S: string): string {
  return `ALTER TABLE ${S}.leases ADD COLUMN IF NOT EXISTS process jsonb;`;
}

/** A grant's process column, from `json` (this process, or NULL) and the grant's token. */
export const processOf = (json: string, token: string) => `(${json} - 'token') || jsonb_build_object('token', ${token})`;

/** What a grant over an existing row sets (the upsert's DO UPDATE). */
export const REGRANT = `owner = EXCLUDED.owner, token = l.token + 1, expires_at = EXCLUDED.expires_at, process = ${processOf('EXCLUDED.process', 'l.token + 1')}`;

/** The holder as LeaseHolder reads it, from a `leases` row; its process only when written with this grant. */
export const HOLDER_COLUMNS = `left(owner, 200) AS owner, token, ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint AS ms,
  CASE WHEN (process->>'token')::bigint = token THEN process - 'token' END AS process`;

/** bigint columns come as strings, or as numbers when read through to_jsonb. */
export interface HolderRow {
  owner: string;
  token: string | number;
  ms: string | number;
  process: unknown;
}

function toHolder(row: HolderRow): LeaseHolder {
  const process = HolderProcessSchema.safeParse(row.process);
  return { owner: row.owner, expiresInMs: Number(row.ms), token: Number(row.token), process: process.success ? process.data : null };
}

/** A session's row with the token of the grant the statement made (null: none) and, without one, the holder: as acquireAndLoad answers. */
export function leasedLoadOf(row: SessionRow & { lease_token: string | null; holder: HolderRow | null }, sessionId: string, owner: string): LeasedLoad {
  const stored = toStoredSession(row);
  if (row.lease_token !== null) return { stored, lease: { sessionId, owner, token: Number(row.lease_token) } };
  return { stored, lease: null, holder: row.holder === null ? null : toHolder(row.holder) };
}

/**
 * The condition append() adds to its UPDATE (parameters $owner and $token, NULL for an
 * unfenced write): with a lease, it must be this grant and unexpired; without one, nobody
 * may hold an unexpired lease on the session.
 */
export function fenceSql(S: string, owner: string, token: string): string {
  return `CASE WHEN ${owner}::text IS NULL
      THEN NOT EXISTS (SELECT 1 FROM ${S}.leases l WHERE l.session_id = $1 AND l.expires_at > now())
      ELSE EXISTS (SELECT 1 FROM ${S}.leases l WHERE l.session_id = $1 AND l.owner = ${owner}::text AND l.token = ${token}::bigint AND l.expires_at > now())
    END`;
}

/**
 * The statement that gives a grant up: it expires at `until` (default now), if it is still
 * held. `$1` is the session id; `owner` and `token` name the grant's parameters. Used alone
 * (releaseLease) and as a step of the write that ends a run (PostgresStore.append).
 */
export function releaseSql(S: string, owner: string, token: string, until = 'now()'): string {
  return `UPDATE ${S}.leases SET expires_at = ${until} WHERE session_id = $1 AND owner = ${owner}::text AND token = ${token}::bigint AND expires_at > now()`;
}

/** Whether a lease, as the fence reads it, is held now by someone else or by nobody (for the error after a failed write). */
export async function leaseHolder(query: Query, S: string, sessionId: string): Promise<{ owner: string; token: number } | null> {
  const { rows } = await query<{ owner: string; token: string }>(`SELECT owner, token FROM ${S}.leases WHERE session_id = $1 AND expires_at > now()`, [
    sessionId,
  ]);
  return rows[0] ? { owner: rows[0].owner, token: Number(rows[0].token) } : null;
}

export class PgLeases implements LeaseOps {
  /** This process as its grants record it (JSON), or null. */
  private readonly process: string | null;

  /** `process`: this process (thisProcess()), recorded with every grant; null records none. */
  constructor(
    private readonly query: Query,
    private readonly S: string,
    private readonly renewals: PgRenewals,
    process: HolderProcess | null,
    /** The store's write that takes the lease too (PostgresStore, postgres-append.ts). */
    private readonly appendGranting: (input: AppendInput, grant: WriteGrant) => Promise<AcquiringAppend>,
  ) {
    this.process = process ? JSON.stringify(process) : null;
  }

  appendAcquiring(input: AppendInput, owner: string, ms: number): Promise<AcquiringAppend> {
    checkMs(ms);
    return this.appendGranting(input, { owner, ms, process: this.process });
  }

  async acquireLease(sessionId: string, owner: string, ms: number, options: { goneToken?: number } = {}): Promise<Lease | null> {
    checkMs(ms);
    try {
      // A gone holder's grant is taken only while it is still that grant: had anyone taken
      // the lease since, the token would differ.
      const { rows } = await this.query<{ token: string }>(
        `INSERT INTO ${this.S}.leases AS l (session_id, owner, token, expires_at, process)
         VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond', ${processOf('$4::jsonb', '1')})
         ON CONFLICT (session_id) DO UPDATE SET ${REGRANT}
         WHERE l.expires_at <= now() OR l.token = $5::bigint
         RETURNING token`,
        [sessionId, owner, ms, this.process, options.goneToken ?? null],
      );
      return rows[0] ? { sessionId, owner, token: Number(rows[0].token) } : null;
    } catch (error) {
      if ((error as { code?: string }).code === '23503') throw new SessionNotFoundError(sessionId);
      throw error;
    }
  }

  async acquireAndLoad(sessionId: string, owner: string, ms: number): Promise<LeasedLoad> {
    checkMs(ms);
    // The row is locked FOR SHARE before the grant: a write to it (by the last holder) waits
    // for this statement, and a row written meanwhile is read as written. So with a grant,
    // what comes back is the session as the last holder left it. No row: no grant either.
    // The holder is looked up only when there is no grant.
    const { rows } = await this.query<SessionRow & { lease_token: string | null; holder: HolderRow | null }>(
      `WITH s AS (
         SELECT ${sessionColumns(this.S)} FROM ${this.S}.sessions WHERE id = $1 FOR SHARE
       ), granted AS (
         INSERT INTO ${this.S}.leases AS l (session_id, owner, token, expires_at, process)
         SELECT s.id, $2, 1, now() + $3 * interval '1 millisecond', ${processOf('$4::jsonb', '1')} FROM s
         ON CONFLICT (session_id) DO UPDATE SET ${REGRANT}
         WHERE l.expires_at <= now()
         RETURNING token
       )
       SELECT s.*, (SELECT token FROM granted) AS lease_token, CASE WHEN h.owner IS NOT NULL THEN to_jsonb(h) END AS holder
       FROM s LEFT JOIN LATERAL (
         SELECT ${HOLDER_COLUMNS}
         FROM ${this.S}.leases WHERE session_id = $1 AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM granted)
       ) h ON true`,
      [sessionId, owner, ms, this.process],
    );
    const row = rows[0];
    if (!row) return { stored: undefined, lease: null, holder: null };
    return leasedLoadOf(row, sessionId, owner);
  }

  /** On the renewals' own connection, batched with the others due (postgres-renewals.ts). */
  async renewLease(lease: Lease, ms: number): Promise<boolean> {
    checkMs(ms);
    return this.renewals.renew(lease, ms);
  }

  async releaseLease(lease: Lease, options: { unused?: boolean } = {}): Promise<void> {
    // Unused: expired as of the last write, which then reads as made by no lease holder.
    const until = options.unused ? `LEAST(now(), (SELECT s.updated_at FROM ${this.S}.sessions s WHERE s.id = $1))` : 'now()';
    await this.query(releaseSql(this.S, '$2', '$3', until), [lease.sessionId, lease.owner, lease.token]);
  }

  async holder(sessionId: string): Promise<LeaseHolder | null> {
    const { rows } = await this.query<HolderRow>(`SELECT ${HOLDER_COLUMNS} FROM ${this.S}.leases WHERE session_id = $1 AND expires_at > now()`, [sessionId]);
    return rows[0] ? toHolder(rows[0]) : null;
  }

  async claimExpired(owner: string, ms: number, limit: number): Promise<ClaimedLease[]> {
    checkMs(ms);
    // The session comes back as the claim locked it (FOR UPDATE returns the row's newest
    // version): its claimer needs no second read.
    const { rows } = await this.query<SessionRow & { lease_token: string }>(
      `WITH c AS (
         SELECT ${sessionColumns(this.S)} FROM ${this.S}.sessions s
         WHERE s.state LIKE 'running%'
           AND NOT EXISTS (SELECT 1 FROM ${this.S}.leases l WHERE l.session_id = s.id AND l.expires_at > now())
           -- Last written under a lease (a fenced write commits only while expires_at > its now()):
           -- that holder is gone. Written without one (a process that takes no lease): only
           -- once it has been quiet a whole lease, for it may still be running.
           AND (EXISTS (SELECT 1 FROM ${this.S}.leases l WHERE l.session_id = s.id AND s.updated_at < l.expires_at)
                OR s.updated_at < now() - $2 * interval '1 millisecond')
         ORDER BY s.updated_at
         LIMIT $3
         FOR UPDATE OF s SKIP LOCKED
       ), granted AS (
         INSERT INTO ${this.S}.leases AS l (session_id, owner, token, expires_at, process)
         SELECT id, $1, 1, now() + $2 * interval '1 millisecond', ${processOf('$4::jsonb', '1')} FROM c
         ON CONFLICT (session_id) DO UPDATE SET ${REGRANT}
         WHERE l.expires_at <= now()
         RETURNING session_id, token
       )
       SELECT c.*, granted.token AS lease_token FROM c JOIN granted ON granted.session_id = c.id ORDER BY c.updated_at`,
      [owner, ms, Math.max(1, Math.floor(limit)), this.process],
    );
    return rows.map((row) => ({ sessionId: row.id, owner, token: Number(row.lease_token), stored: toStoredSession(row) }));
  }
}

function checkMs(ms: number): void {
  if (!Number.isInteger(ms) || ms < 1) throw new UserError(`A lease lasts a whole number of milliseconds ≥ 1 (got ${String(ms)}).`);
}
