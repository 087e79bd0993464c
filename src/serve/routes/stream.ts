/**
 * GET /sessions/:id/stream — Server-Sent Events of one session, from any server:
 * - `entry`: each journal entry as it is written, by this server or any other on the same
 *   store; its id is its seq, so a reconnecting EventSource resumes with Last-Event-ID and
 *   misses nothing (the durable record). New writes are heard through the store's watch
 *   (PostgreSQL LISTEN/NOTIFY: at once) or, for stores without one (SQLite), by polling.
 * - `session`: the library's live event stream (session.subscribe(): round_started,
 *   round_finished, tool_call_checked, artifact_published, waiting, done, …) of the session
 *   wherever it runs: the server running it publishes each event on the store's event bus
 *   (PostgreSQL NOTIFY), or, on a store without one, this process forwards its own
 *   sessions'. Live only and best effort: no id, not replayed after a reconnect, text
 *   deltas not carried, long strings clipped; checked with SessionStreamEventSchema.
 * - `done` once the journal reaches the done state, then the stream ends.
 */
import { streamSSE } from 'hono/streaming';
import type { RouteModule } from '../route.js';
import { query, sessionId } from '../route.js';
import { describeForLog, parseOr400, sessionNotFound, toHttpError, worthLogging } from '../../http/errors.js';
import { ErrorBody, StreamQuery } from '../schemas.js';
import { SessionStreamEventSchema, type SessionStreamEvent } from '../../machines/stream-events.js';
import { safeLine } from '../../text/safe-text.js';
import { HEARTBEAT_MS, KEEP_ALIVE, RETRY_MS, watchOrPoll } from '../../http/sse.js';

const PAGE = 500;

export const stream: RouteModule = {
  doc: {
    method: 'get',
    path: '/sessions/{id}/stream',
    summary: "Server-Sent Events: the session's journal entries as they are written and its live events (from any server), then `done`",
    query: StreamQuery,
    responses: {
      200: {
        description:
          '`event: entry` (data: a journal entry, id: its seq; durable, resumable) and `event: session` ' +
          '(data: a live library event, SessionStreamEvent; best effort, no text deltas) … `event: done`',
        contentType: 'text/event-stream',
      },
      400: { description: 'Bad query or Last-Event-ID', schema: ErrorBody },
      404: { description: 'No such session', schema: ErrorBody },
    },
  },
  mount(app, { store, streams, log, host }) {
    app.get('/sessions/:id/stream', async (c) => {
      const id = sessionId(c);
      const lastEventId = c.req.header('last-event-id');
      const after =
        lastEventId !== undefined ? (parseOr400(StreamQuery.shape.after, lastEventId.trim(), 'Last-Event-ID header') ?? 0) : (query(c, StreamQuery).after ?? 0);
      if (!(await store.load(id))) throw sessionNotFound(id);

      return streamSSE(c, async (sse) => {
        let cursor = after;
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
        let unlive: (() => Promise<void>) | null = null;
        const live: SessionStreamEvent[] = [];
        try {
          // Listen before the first read: a write between the read and the listen is never missed.
          unwatch = await watchOrPoll(store, poke, { sessionId: id, onError: (e) => log(`stream ${safeLine(id)}: ${String(e)}`) });
          unlive = await host.watchEvents(
            id,
            (raw) => {
              // From the database: anyone who can NOTIFY could have sent it. Bounded while the client lags.
              const parsed = SessionStreamEventSchema.safeParse(raw);
              if (parsed.success && live.length < 1000) live.push(parsed.data);
              wake?.();
            },
            (e) => log(`stream ${safeLine(id)}: ${String(e)}`),
          );
          await sse.writeSSE({ event: 'hello', data: JSON.stringify({ sessionId: id, after }), retry: RETRY_MS });
          // A client already past the last entry of a finished session: nothing will follow.
          if (after > 0) {
            const [last] = await store.journal(id, { afterSeq: after - 1, limit: 1 });
            if (last?.seq === after && last.state === 'done') {
              await sse.writeSSE({ event: 'done', data: JSON.stringify({ sessionId: id, seq: last.seq }) });
              ended = true;
            }
          }
          while (!ended) {
            for (const event of live.splice(0)) await sse.writeSSE({ event: 'session', data: JSON.stringify(event) });
            if (!dirty && live.length === 0) {
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
              await sse.writeSSE({ event: 'entry', id: String(entry.seq), data: JSON.stringify(entry) });
              cursor = entry.seq;
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
          const http = toHttpError(error);
          if (worthLogging(error, http)) log(`stream ${safeLine(id)}: ${describeForLog(error)}`);
          await sse.writeSSE({ event: 'error', data: JSON.stringify(http.body()) }).catch(() => {});
        } finally {
          streams.delete(handle);
          await unwatch?.().catch(() => {});
          await unlive?.().catch(() => {});
        }
      });
    });
  },
};
