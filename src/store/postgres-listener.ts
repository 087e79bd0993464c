/** The LISTEN side of PostgresStore.watch. Types only from `pg`: postgres-store.ts loads it. */
import type pg from 'pg';
import type { SessionChange } from './session-store.js';
import { translateConnectError } from './postgres-errors.js';

export interface ListenerEntry<T = SessionChange> {
  listener: (change: T) => void;
  sessionId: string | undefined;
  onError: ((error: unknown) => void) | undefined;
}

/**
 * One LISTEN connection per store, outside the pool's rotation (a pooled client would
 * be handed to queries that do not expect notifications). Reconnects after a loss and
 * re-announces the sessions written meanwhile.
 */
export class Listener<T extends { sessionId: string } = SessionChange> {
  private readonly entries = new Set<ListenerEntry<T>>();
  private client: pg.PoolClient | null = null;
  private connecting: Promise<void> | null = null;
  private lastSeen: Date | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
    private readonly S: string,
    private readonly target: string,
    /** Reads a notification's payload; `at` (the server's time of a change) drives the catch-up after a reconnect. */
    private readonly parse: (payload: string) => { change: T; at?: Date } | null = parseChange as never,
    /** Re-announce the sessions written while the connection was lost (changes only: live events are not kept). */
    private readonly catchUpAfterLoss = true,
  ) {}

  async add(entry: ListenerEntry<T>): Promise<void> {
    this.entries.add(entry);
    await this.connect();
  }

  /** Adds `entry` once listening; resolves with its remover (idempotent). */
  async subscribe(entry: ListenerEntry<T>): Promise<() => Promise<void>> {
    await this.add(entry);
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      await this.remove(entry);
    };
  }

  async remove(entry: ListenerEntry<T>): Promise<void> {
    this.entries.delete(entry);
    if (this.entries.size === 0) await this.disconnect();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    await this.disconnect();
  }

  private connect(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= (async () => {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        throw translateConnectError(error, this.target) ?? error;
      }
      client.on('notification', (message) => {
        if (message.channel !== this.channel || !message.payload) return;
        // Anyone with access to the database can NOTIFY this channel: check the shape.
        const change = this.parse(message.payload);
        if (!change) {
          for (const entry of this.entries) entry.onError?.(new Error(`Ignored a malformed notification on "${this.channel}".`));
          return;
        }
        if (change.at && (!this.lastSeen || change.at > this.lastSeen)) this.lastSeen = change.at;
        this.dispatch(change.change);
      });
      client.on('error', (error) => this.lost(client, error));
      await client.query(`LISTEN "${this.channel}"`);
      // The server's clock, not ours: catching up after a loss compares with its updated_at.
      const { rows } = await client.query<{ at: Date }>('SELECT now() AS at');
      this.lastSeen ??= rows[0]!.at;
      this.client = client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async disconnect(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    if (!client) return;
    await client.query(`UNLISTEN "${this.channel}"`).catch(() => {});
    client.release(true); // never hand a LISTENing connection back to the pool
  }

  private lost(client: pg.PoolClient, error: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    client.release(true);
    for (const entry of this.entries) entry.onError?.(error);
    const since = this.lastSeen;
    const again = () => {
      this.retry = null;
      if (this.closed || this.entries.size === 0) return;
      this.connect()
        .then(() => (this.catchUpAfterLoss ? this.catchUp(since) : undefined))
        .catch((failure: unknown) => {
          for (const entry of this.entries) entry.onError?.(failure);
          this.retry = setTimeout(again, 1000);
          this.retry.unref();
        });
    };
    this.retry = setTimeout(again, 250);
    this.retry.unref();
  }

  /**
   * After a reconnect: announce what was written while nobody listened. `since` is the
   * server's time of the last change heard (or of the LISTEN); the margin covers writes
   * whose transaction began before it but committed after.
   */
  private async catchUp(since: Date | null): Promise<void> {
    const { rows } = await this.pool.query<{ id: string; revision: number; last_seq: number; state: string }>(
      `SELECT id, revision, last_seq, state FROM ${this.S}.sessions WHERE updated_at > $1::timestamptz - interval '5 seconds'`,
      [since ?? new Date(0)],
    );
    for (const row of rows) this.dispatch({ sessionId: row.id, revision: row.revision, lastSeq: row.last_seq, state: row.state } as unknown as T);
  }

  private dispatch(change: T): void {
    for (const entry of [...this.entries]) {
      if (entry.sessionId !== undefined && entry.sessionId !== change.sessionId) continue;
      try {
        entry.listener(change);
      } catch (error) {
        // One listener's bug must not stop the others (or kill the connection's handler).
        entry.onError?.(error);
      }
    }
  }
}

/** The trigger's payload `{sessionId, revision, lastSeq, state, at}`, or null for anything else. */
function parseChange(payload: string): { change: SessionChange; at: Date } | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  const v = value as Record<string, unknown> | null;
  if (
    !v ||
    typeof v.sessionId !== 'string' ||
    typeof v.revision !== 'number' ||
    typeof v.lastSeq !== 'number' ||
    typeof v.state !== 'string' ||
    typeof v.at !== 'string'
  )
    return null;
  const at = new Date(v.at);
  if (Number.isNaN(at.getTime())) return null;
  return { change: { sessionId: v.sessionId, revision: v.revision, lastSeq: v.lastSeq, state: v.state }, at };
}
