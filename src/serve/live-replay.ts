/**
 * The live events of the sessions a server hears about, kept per session for the current
 * run, so that a stream that opens late (a page that sent before its stream was open) or
 * reconnects (`Last-Event-ID`) gets them again. Text deltas are among them only for the model
 * calls that streamed, which is while someone followed the session (followers.ts).
 *
 * A run is one stretch of a session held by one process: from a send (or a takeover) until
 * the session waits again. The process running it numbers its live events (`run`, `n`) and
 * keeps them as `LiveRecord`s; on a store with an event bus (PostgreSQL NOTIFY) it also
 * publishes them while another server watches the session, and sends what it kept of the run
 * to a server that starts to watch (live-events.ts), so every server that watches keeps the
 * same records under the same numbers. A record of a new run replaces the session's buffer:
 * the buffer is the current run's.
 *
 * Bounded: per session by events and bytes (the oldest go first; a client resuming before
 * what is left gets what is left), by sessions (the least recently used nobody watches go),
 * and in bytes for all sessions together (the least recently used session's records go).
 * What is durable is the journal; this is the part a UI shows while it happens.
 */
import * as z from 'zod';
import { SessionStreamEventSchema } from '../core/machines/stream-events.js';

/** A run's name: short, random, lowercase (it is part of the stream's message ids). */
export const RunIdSchema = z.string().regex(/^[a-z0-9]{1,16}$/);

/** One live event as the process running the session numbered it. */
export const LiveRecordSchema = z.strictObject({
  run: RunIdSchema,
  /** 1, 2, … within the run. */
  n: z.number().int().positive(),
  event: SessionStreamEventSchema,
});
export type LiveRecord = z.infer<typeof LiveRecordSchema>;

/** Where a client's stream was in the live events: after record `n` of `run`. */
export interface LivePosition {
  run: string;
  n: number;
}

export interface ReplayLimits {
  /** Records kept per session (default 5,000: a few long replies as text deltas). */
  maxEvents: number;
  /** Bytes of JSON kept per session (default 1 MB). */
  maxBytes: number;
  /** Sessions kept (default 100; watched ones beyond it too, within `maxTotalBytes`). */
  maxSessions: number;
  /** Bytes of JSON kept for all sessions together (default 64 MB; `--max-replay-mb`): past it the least recently used session's buffer goes. */
  maxTotalBytes: number;
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = { maxEvents: 5_000, maxBytes: 1_000_000, maxSessions: 100, maxTotalBytes: 64_000_000 };

interface SessionBuffer {
  run: string;
  /** Whether `run` was numbered by this process (it runs the session), not heard from another. */
  own: boolean;
  /** The number of the last record of `run` taken, kept when the records are dropped (so an echo of one is still known). */
  last: number;
  records: { record: LiveRecord; bytes: number }[];
  bytes: number;
  listeners: Set<(record: LiveRecord) => void>;
}

type RecordListener = (record: LiveRecord) => void;

/**
 * The replay buffers of one process. Bounded three ways: per session (records, bytes), in
 * sessions (the least recently used nobody watches go), and in bytes for all sessions
 * together — however many sessions are watched, past `maxTotalBytes` the least recently used
 * session's records go (its watchers stay, and get what comes next), so many watchers of many
 * sessions with long replies cost at most the budget.
 *
 * @example
 * const replay = new ReplayBuffers();
 * const { replay: missed, stop } = replay.watch('s-1', (record) => send(record));
 * replay.add('s-1', { run: 'k3x9', n: 1, event });
 */
export class ReplayBuffers {
  private readonly sessions = new Map<string, SessionBuffer>();
  private readonly limits: ReplayLimits;
  private total = 0;

  constructor(limits: Partial<ReplayLimits> = {}) {
    this.limits = { ...DEFAULT_REPLAY_LIMITS, ...limits };
  }

  /** Bytes of JSON the buffers hold now, all sessions together (at most `maxTotalBytes`). */
  get bytes(): number {
    return this.total;
  }

  /**
   * Keeps a record of `sessionId`'s current run (a new run starts a new buffer) and hands it
   * to the session's watchers; a record of the current run kept already (`has`) is ignored.
   * `own`: this process numbered it (it runs the session).
   */
  add(sessionId: string, record: LiveRecord, { own = false } = {}): void {
    if (this.has(sessionId, record.run, record.n)) return;
    const buffer = this.touch(sessionId);
    if (buffer.run !== record.run) {
      this.drop(buffer);
      buffer.run = record.run;
      buffer.own = own;
    }
    const bytes = Buffer.byteLength(JSON.stringify(record.event));
    buffer.records.push({ record, bytes });
    buffer.last = record.n;
    buffer.bytes += bytes;
    this.total += bytes;
    while (buffer.records.length > this.limits.maxEvents || (buffer.bytes > this.limits.maxBytes && buffer.records.length > 1)) this.shift(buffer);
    this.evict(buffer);
    for (const listener of [...buffer.listeners]) listener(record);
  }

  /**
   * Whether record `n` of `run` was taken already: `run` is the session's current run and `n`
   * is not after its last record. Takes what a NOTIFY carried, unchecked.
   */
  has(sessionId: unknown, run: unknown, n: unknown): boolean {
    const buffer = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    return buffer !== undefined && buffer.run !== '' && buffer.run === run && typeof n === 'number' && n <= buffer.last;
  }

  /** The current run's records kept so far if this process numbered them (it runs the session), else none. */
  ownRecords(sessionId: string): LiveRecord[] {
    const buffer = this.sessions.get(sessionId);
    return buffer?.own ? buffer.records.map((r) => r.record) : [];
  }

  /** The current run's records kept so far, and each new one as it comes, until `stop()`. */
  watch(sessionId: string, listener: RecordListener): { replay: LiveRecord[]; stop: () => void } {
    const watched = this.touch(sessionId);
    this.evict(watched);
    watched.listeners.add(listener);
    return { replay: watched.records.map((r) => r.record), stop: () => watched.listeners.delete(listener) };
  }

  /** The session's buffer (a new one if none), now the most recently used: the map's order is the eviction order. */
  private touch(sessionId: string): SessionBuffer {
    const buffer = this.sessions.get(sessionId) ?? { run: '', own: false, last: 0, records: [], bytes: 0, listeners: new Set() };
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, buffer);
    return buffer;
  }

  private shift(buffer: SessionBuffer): void {
    const bytes = buffer.records.shift()!.bytes;
    buffer.bytes -= bytes;
    this.total -= bytes;
  }

  private drop(buffer: SessionBuffer): void {
    this.total -= buffer.bytes;
    buffer.records = [];
    buffer.bytes = 0;
  }

  /**
   * Beyond `maxSessions`, drops the least recently used sessions nobody watches; beyond
   * `maxTotalBytes`, the least recently used sessions' records (a session nobody watches
   * goes whole), then, if `current` alone is over it, its oldest records.
   */
  private evict(current: SessionBuffer): void {
    for (const [id, buffer] of this.sessions) {
      if (this.sessions.size <= this.limits.maxSessions) break;
      if (buffer.listeners.size > 0 || buffer === current) continue;
      this.drop(buffer);
      this.sessions.delete(id);
    }
    for (const [id, buffer] of this.sessions) {
      if (this.total <= this.limits.maxTotalBytes || buffer === current) break;
      this.drop(buffer);
      if (buffer.listeners.size === 0) this.sessions.delete(id);
    }
    while (this.total > this.limits.maxTotalBytes && current.records.length > 0) this.shift(current);
  }
}

/** The records of `replay` a client at `after` has not seen: all of a run it was not in, the rest of the one it was in. */
export function missedRecords(replay: readonly LiveRecord[], after: LivePosition | null): LiveRecord[] {
  if (!after) return [...replay];
  return replay.filter((r) => r.run !== after.run || r.n > after.n);
}
