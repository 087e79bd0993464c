/**
 * Live session events across servers (EventBus on PostgreSQL): NOTIFY on a per-store
 * channel, `steward_events_<schema>`, LISTENed by one dedicated connection per process.
 * NOTIFY payloads are limited to 8000 bytes, so strings are clipped and an event still too
 * big is dropped: these events are live progress, best effort; the journal (and its
 * `entry` events on the stream) stays the durable record.
 *
 * Order: a publisher's events go out through one queue, a batch per statement
 * (`pg_notify` over `unnest`), and PostgreSQL delivers one transaction's notifications in
 * order, so a listener sees one session's events in the order they happened.
 *
 * Batches: the first event into an empty queue waits GATHER_MS for the others of its moment
 * (a send announces several: the state it entered, the wait, the call's end). Each statement
 * is a round trip that wakes a database backend; sent one per event they were more of a busy
 * server's statements than its journal writes, for a delay no person following a stream sees.
 *
 * Types only from `pg`: postgres-store.ts loads it.
 */
import type pg from 'pg';
import type { EventBus } from './session-store.js';
import { Listener } from './postgres-listener.js';
import { DEFER_FLUSH } from './postgres-prepared.js';

/** Under PostgreSQL's 8000-byte NOTIFY limit, with room for the envelope. */
export const MAX_EVENT_PAYLOAD = 7800;
/** Longest string an event carries across servers (a notice, a refusal message, a summary). */
const MAX_STRING = 1000;
/** How long the first event into an empty queue waits for others to go in its statement. */
const GATHER_MS = 10;

interface Published {
  sessionId: string;
  event: unknown;
}

export class PgEventBus implements EventBus {
  private queue: string[] = [];
  private sending: Promise<void> | null = null;
  private listener: Listener<Published> | null = null;
  /** Payloads queued, and handed to the server, since the bus was made (flush waits for a mark). */
  private queued = 0;
  private handed = 0;
  /** Flushes waiting for the next batch to be handed over. */
  private waiting: (() => void)[] = [];

  constructor(
    private readonly pool: pg.Pool,
    /** The store's queries (prepared statements, errors that name the server). */
    private readonly query: (sql: string, params: unknown[]) => Promise<unknown>,
    private readonly channel: string,
    private readonly S: string,
    private readonly target: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  publishEvents(sessionId: string, events: unknown[]): void {
    for (const event of events) {
      // No string in it can be longer than the whole: most events (text deltas) need no clipping.
      const whole = JSON.stringify({ sessionId, event });
      const payload = whole.length <= MAX_STRING ? whole : JSON.stringify({ sessionId, event: clipStrings(event) });
      if (Buffer.byteLength(payload) > MAX_EVENT_PAYLOAD) continue;
      this.queue.push(payload);
      this.queued += 1;
    }
    this.sending ??= this.drain();
  }

  /**
   * Resolves once every event published so far was handed to the server. Events published
   * meanwhile are not waited for: a publisher that never pauses does not hold a flush up.
   */
  async flush(): Promise<void> {
    const mark = this.queued;
    while (this.handed < mark && this.sending) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  async watchEvents(
    sessionId: string | undefined,
    listener: (event: unknown) => void,
    options: { onError?: (error: unknown) => void } = {},
  ): Promise<() => Promise<void>> {
    this.listener ??= new Listener<Published>(this.pool, this.channel, this.S, this.target, parsePublished, false);
    return this.listener.subscribe({ listener: (p: Published) => listener(p.event), sessionId, onError: options.onError });
  }

  async close(): Promise<void> {
    await this.flush().catch(() => {});
    await this.listener?.close();
    this.listener = null;
  }

  private async drain(): Promise<void> {
    try {
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, 200);
        // Best effort, so its commit does not wait for the disk: PostgreSQL holds one lock for
        // the whole cluster while a transaction that NOTIFYs commits, and every journal write
        // (whose trigger NOTIFYs) would queue behind that flush.
        await this.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS t(p, n)${DEFER_FLUSH} ORDER BY n`, [this.channel, batch]).catch(
          this.onError,
        );
        this.handed += batch.length;
        for (const resolve of this.waiting.splice(0)) resolve();
      }
    } finally {
      this.sending = null;
      for (const resolve of this.waiting.splice(0)) resolve();
    }
  }
}

/** A copy with every string clipped to MAX_STRING characters (events are small by design; a model's text may not be). */
function clipStrings(value: unknown): unknown {
  if (typeof value === 'string') return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING - 1)}…` : value;
  if (Array.isArray(value)) return value.map(clipStrings);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipStrings(v)]));
  return value;
}

/** Anyone with access to the database can NOTIFY: only `{sessionId: string, event: object}` passes. */
function parsePublished(payload: string): { change: Published } | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  const v = value as Partial<Published> | null;
  if (!v || typeof v.sessionId !== 'string' || !v.event || typeof v.event !== 'object') return null;
  return { change: { sessionId: v.sessionId, event: v.event } };
}
