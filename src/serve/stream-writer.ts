/**
 * What GET /sessions/:id/stream writes, once the request is checked (routes/stream.ts):
 * `hello`; then, as they come, journal entries (`entry`, durable: read from the store, from
 * any server) and live events (`session`: the current run's, replayed from this process's
 * buffer first, then as they are published; see live-replay.ts); `done` once the journal
 * reaches the done state. Every `entry` and `session` message's id is the stream's cursor
 * at that message (schemas.ts StreamCursor), so Last-Event-ID resumes both parts.
 */
import type { SSEStreamingApi } from 'hono/streaming';
import { toHttpError } from '../http/errors.js';
import { HEARTBEAT_MS, KEEP_ALIVE, RETRY_MS, watchOrPoll } from '../http/sse.js';
import { safeLine } from '../text/safe-text.js';
import type { SessionStore } from '../store/session-store.js';
import { missedRecords, type LivePosition, type LiveRecord } from './live-replay.js';
import type { SessionHost } from './session-host.js';

const PAGE = 500;
/** Live events waiting for a slow client; beyond it the oldest are dropped (the journal is the durable part). */
const MAX_QUEUED = 10_000;

export interface StreamStart {
  sessionId: string;
  /** Journal seq the client has. */
  after: number;
  /** Last live event the client has, if any. */
  live: LivePosition | null;
}

export interface StreamDeps {
  store: SessionStore;
  host: SessionHost;
  streams: Set<{ close(): void }>;
  log: (message: string) => void;
}

/** A message id: the journal seq delivered, and the last live event's run and number once there is one. */
export function cursorId(seq: number, live: LivePosition | null): string {
  return live ? `${seq}.${live.run}.${live.n}` : String(seq);
}

export async function writeStream(sse: SSEStreamingApi, start: StreamStart, { store, host, streams, log }: StreamDeps): Promise<void> {
  const id = start.sessionId;
  let cursor = start.after;
  let live = start.live;
  let dirty = true;
  let ended = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const handle = {
    close: () => {
      ended = true;
      wake?.();
    },
  };
  streams.add(handle);
  sse.onAbort(handle.close);
  let unwatch: (() => Promise<void>) | null = null;
  let unlive: (() => void) | null = null;
  const queue: LiveRecord[] = [];
  try {
    // Listen before the first read: a write between the read and the listen is never missed.
    unwatch = await watchOrPoll(store, poke, { sessionId: id, onError: (e) => log(`stream ${safeLine(id)}: ${String(e)}`) });
    const watched = await host.watchLive(id, (record) => {
      if (queue.length >= MAX_QUEUED) queue.shift();
      queue.push(record);
      wake?.();
    });
    unlive = watched.stop;
    queue.unshift(...missedRecords(watched.replay, live));
    await sse.writeSSE({ event: 'hello', data: JSON.stringify({ sessionId: id, after: start.after }), retry: RETRY_MS });
    // A client already past the last entry of a finished session: nothing will follow.
    if (cursor > 0) {
      const [last] = await store.journal(id, { afterSeq: cursor - 1, limit: 1 });
      if (last?.seq === cursor && last.state === 'done') {
        await sse.writeSSE({ event: 'done', data: JSON.stringify({ sessionId: id, seq: last.seq }) });
        ended = true;
      }
    }
    while (!ended) {
      for (const record of queue.splice(0)) {
        // A run sent again for a new watcher elsewhere (live-events.ts) may hold what this client had.
        if (live && record.run === live.run && record.n <= live.n) continue;
        live = { run: record.run, n: record.n };
        await sse.writeSSE({ event: 'session', id: cursorId(cursor, live), data: JSON.stringify(record.event) });
      }
      if (!dirty && queue.length === 0) {
        const beat = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), HEARTBEAT_MS);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = null;
        if (beat) await sse.write(KEEP_ALIVE);
        continue;
      }
      if (!dirty) continue; // woken by live events only
      dirty = false;
      const entries = await store.journal(id, { afterSeq: cursor, limit: PAGE });
      if (entries.length === PAGE) dirty = true;
      for (const entry of entries) {
        cursor = entry.seq;
        await sse.writeSSE({ event: 'entry', id: cursorId(cursor, live), data: JSON.stringify(entry) });
        if (entry.state === 'done') {
          await sse.writeSSE({ event: 'done', data: JSON.stringify({ sessionId: id, seq: entry.seq }) });
          ended = true;
          break;
        }
      }
    }
  } catch (error) {
    // The store failed mid-stream: say so in the stream's own terms, then end it
    // (the EventSource reconnects with Last-Event-ID and resumes where it was).
    const http = toHttpError(error, (details) => log(`stream ${safeLine(id)}: ${details}`));
    await sse.writeSSE({ event: 'error', data: JSON.stringify(http.body()) }).catch(() => {});
  } finally {
    streams.delete(handle);
    await unwatch?.().catch(() => {});
    unlive?.();
  }
}
