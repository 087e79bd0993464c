/**
 * Lease renewals on PostgreSQL, kept out of the way of the work they protect.
 *
 * A server renews each lease it holds every third of a lease. Sent through the store's pool
 * like any query, a renewal waits behind every query queued there: after a takeover, when a
 * survivor resumes dozens of sessions at once, its renewals went unconfirmed for a whole
 * lease, so a live server lost the leases of sessions it was running and another server ran
 * them again (docs/design.md, "Renew"). Here renewals go on a connection of their own
 * (the store's, when it owns its pool; through the app's pool otherwise), and the renewals
 * asked for while one statement is under way go together in the next: one round trip renews
 * every lease that came due meanwhile.
 */
import pg from 'pg';
import type { Lease } from './session-store.js';

/** A statement through the store's pool. */
export type Query = <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) => Promise<pg.QueryResult<R>>;

interface Due {
  lease: Lease;
  ms: number;
  resolve: (renewed: boolean) => void;
  reject: (error: unknown) => void;
}

export class PgRenewals {
  private due: Due[] = [];
  private flushing: Promise<void> | null = null;
  private client: pg.Client | null = null;
  private closed = false;

  /**
   * `connect`: a new connection of its own (null: renew through `query`, the pool's).
   * `ready`: the schema is in place (the store's migration).
   */
  constructor(
    private readonly S: string,
    private readonly query: Query,
    private readonly connect: (() => pg.Client) | null,
    private readonly ready: () => Promise<void>,
  ) {}

  /** Extends `lease` by `ms` if it is still the caller's and unexpired; false when it is not. */
  renew(lease: Lease, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.due.push({ lease, ms, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async flush(): Promise<void> {
    try {
      while (this.due.length > 0) {
        const batch = this.due;
        this.due = [];
        // One statement per lease length (a server uses one).
        for (const ms of new Set(batch.map((d) => d.ms)))
          await this.renewBatch(
            batch.filter((d) => d.ms === ms),
            ms,
          );
      }
    } finally {
      // In the same turn as the loop's last look: a renewal asked for after it (by the caller
      // of one just answered) starts the next flush instead of waiting on this one forever.
      this.flushing = null;
    }
  }

  private async renewBatch(batch: Due[], ms: number): Promise<void> {
    try {
      await this.ready();
      const { rows } = await this.run<{ session_id: string; token: string }>(
        `UPDATE ${this.S}.leases AS l SET expires_at = now() + $4 * interval '1 millisecond'
         FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(session_id, owner, token)
         WHERE l.session_id = r.session_id AND l.owner = r.owner AND l.token = r.token AND l.expires_at > now()
         RETURNING l.session_id, l.token`,
        [batch.map((d) => d.lease.sessionId), batch.map((d) => d.lease.owner), batch.map((d) => d.lease.token), ms],
      );
      const renewed = new Set(rows.map((row) => `${row.session_id}\u0000${row.token}`));
      for (const d of batch) d.resolve(renewed.has(`${d.lease.sessionId}\u0000${d.lease.token}`));
    } catch (error) {
      for (const d of batch) d.reject(error);
    }
  }

  private async run<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    if (!this.connect || this.closed) return this.query<R>(sql, params);
    if (!this.client) {
      const client = this.connect();
      // A broken connection is dropped; the next renewal opens another.
      client.on('error', () => {
        if (this.client === client) this.client = null;
      });
      try {
        await client.connect();
        // A renewal lost with a database crash makes the lease end early, never late: it need
        // not wait for its WAL flush, which on a busy disk is most of its time.
        await client.query('SET synchronous_commit = off');
      } catch (error) {
        void client.end().catch(() => {});
        throw error;
      }
      this.client = client;
    }
    try {
      return await this.client.query<R>(sql, params);
    } catch (error) {
      // Whatever failed, the next renewal starts on a fresh connection.
      const broken = this.client;
      this.client = null;
      void broken?.end().catch(() => {});
      throw error;
    }
  }
}
