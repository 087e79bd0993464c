/**
 * The live events of the sessions a server hears about, kept per session for the current
 * run, so that a stream that opens late (a page that sent before its stream was open) or
 * reconnects (`Last-Event-ID`) gets them again. Text deltas are among them only for the model
 * calls that streamed, which is while someone followed the session (followers.ts).
 *
 * A run is one stretch of a session held by one process: from a send (or a takeover) until
 * the session waits again. The process running it numbers its live events (`run`, `n`) and
 * publishes them as `LiveRecord`s — on the store's event bus when it has one (PostgreSQL
 * NOTIFY, so every server keeps the same records under the same numbers), else only here.
 * A record of a new run replaces the session's buffer: the buffer is the current run's.
 *
 * Bounded: per session by events and characters (the oldest go first; a client resuming
 * before what is left gets what is left), and by sessions (the least recently fed go).
 * What is durable is the journal; this is the part a UI shows while it happens.
 */
import * as z from 'zod';
import { SessionStreamEventSchema } from '../machines/stream-events.js';

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
  /** Characters of JSON kept per session (default 1 MB). */
  maxChars: number;
  /** Sessions kept (default 100). */
  maxSessions: number;
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = { maxEvents: 5_000, maxChars: 1_000_000, maxSessions: 100 };

interface Buffer {
  run: string;
  records: { record: LiveRecord; chars: number }[];
  chars: number;
  listeners: Set<(record: LiveRecord) => void>;
}

type RecordListener = (record: LiveRecord) => void;

/**
 * The replay buffers of one process.
 *
 * @example
 * const replay = new ReplayBuffers();
 * const { replay: missed, stop } = replay.watch('s-1', (record) => send(record));
 * replay.add('s-1', { run: 'k3x9', n: 1, event });
 */
export class ReplayBuffers {
  private readonly sessions = new Map<string, Buffer>();

  constructor(private readonly limits: ReplayLimits = DEFAULT_REPLAY_LIMITS) {}

  /**
   * Keeps a record of `sessionId`'s current run (a new run starts a new buffer) and hands it
   * to the session's watchers; a record of the current run kept already (`has`) is ignored.
   */
  add(sessionId: string, record: LiveRecord): void {
    if (this.has(sessionId, record.run, record.n)) return;
    let buffer = this.sessions.get(sessionId);
    if (buffer) this.sessions.delete(sessionId); // re-inserted below: the map's order is the eviction order
    buffer ??= { run: record.run, records: [], chars: 0, listeners: new Set() };
    if (buffer.run !== record.run) Object.assign(buffer, { run: record.run, records: [], chars: 0 });
    const chars = JSON.stringify(record.event).length;
    buffer.records.push({ record, chars });
    buffer.chars += chars;
    while (buffer.records.length > this.limits.maxEvents || (buffer.chars > this.limits.maxChars && buffer.records.length > 1))
      buffer.chars -= buffer.records.shift()!.chars;
    this.sessions.set(sessionId, buffer);
    this.evict();
    for (const listener of [...buffer.listeners]) listener(record);
  }

  /**
   * Whether record `n` of `run` was kept already: `run` is the session's current run and `n`
   * is not after its last record. Takes what a NOTIFY carried, unchecked.
   */
  has(sessionId: unknown, run: unknown, n: unknown): boolean {
    const buffer = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    const last = buffer?.records.at(-1)?.record;
    return buffer !== undefined && buffer.run === run && typeof n === 'number' && last !== undefined && n <= last.n;
  }

  /** The current run's records kept so far, and each new one as it comes, until `stop()`. */
  watch(sessionId: string, listener: RecordListener): { replay: LiveRecord[]; stop: () => void } {
    let buffer = this.sessions.get(sessionId);
    if (!buffer) {
      buffer = { run: '', records: [], chars: 0, listeners: new Set() };
      this.sessions.set(sessionId, buffer);
      this.evict();
    }
    const watched = buffer;
    watched.listeners.add(listener);
    return { replay: watched.records.map((r) => r.record), stop: () => watched.listeners.delete(listener) };
  }

  /** Drops the least recently fed sessions nobody watches, beyond `maxSessions`. */
  private evict(): void {
    for (const [id, buffer] of this.sessions) {
      if (this.sessions.size <= this.limits.maxSessions) return;
      if (buffer.listeners.size === 0) this.sessions.delete(id);
    }
  }
}

/** The records of `replay` a client at `after` has not seen: all of a run it was not in, the rest of the one it was in. */
export function missedRecords(replay: readonly LiveRecord[], after: LivePosition | null): LiveRecord[] {
  if (!after) return [...replay];
  return replay.filter((r) => r.run !== after.run || r.n > after.n);
}
