/** The LISTEN side of PostgresStore.watch. Types only from `pg`: postgres-store.ts loads it. */
import type pg from 'pg';
import type { SessionChange } from './session-store.js';
import { translateConnectError } from './postgres-errors.js';

export interface ListenerEntry {
  listener: (change: SessionChange) => void;
  sessionId: string | undefined;
  onError: ((error: unknown) => void) | undefined;
}

/**
 * One LISTEN connection per store, outside the pool's rotation (a pooled client would
 * be handed to queries that do not expect notifications). Reconnects after a loss and
 * re-announces the sessions written meanwhile.
 */
export class Listener {
  private readonly entries = new Set<ListenerEntry>();
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
  ) {}

  async add(entry: ListenerEntry): Promise<void> {
    this.entries.add(entry);
    await this.connect();
  }

  async remove(entry: ListenerEntry): Promise<void> {
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
        this.lastSeen = new Date();
        this.dispatch(JSON.parse(message.payload) as SessionChange);
      });
      client.on('error', (error) => this.lost(client, error));
      await client.query(`LISTEN "${this.channel}"`);
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
        .then(() => this.catchUp(since))
        .catch((failure: unknown) => {
          for (const entry of this.entries) entry.onError?.(failure);
          this.retry = setTimeout(again, 1000);
          this.retry.unref();
        });
    };
    this.retry = setTimeout(again, 250);
    this.retry.unref();
  }

  /** After a reconnect: announce what was written while nobody listened (a few seconds' margin). */
  private async catchUp(since: Date | null): Promise<void> {
    const { rows } = await this.pool.query<{ id: string; revision: number; last_seq: number; state: string }>(
      `SELECT id, revision, last_seq, state FROM ${this.S}.sessions WHERE $1::timestamptz IS NULL OR updated_at > $1::timestamptz - interval '5 seconds'`,
      [since],
    );
    for (const row of rows) this.dispatch({ sessionId: row.id, revision: row.revision, lastSeq: row.last_seq, state: row.state });
  }

  private dispatch(change: SessionChange): void {
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

