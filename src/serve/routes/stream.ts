/**
 * GET /sessions/:id/stream — Server-Sent Events of one session, from any server:
 * - `entry`: each journal entry as it is written, by this server or any other on the same
 *   store (the durable record). New writes are heard through the store's watch
 *   (PostgreSQL LISTEN/NOTIFY: at once) or, for stores without one (SQLite), by polling.
 * - `session`: the library's live events (session.subscribe(), text deltas included) of the
 *   session wherever it runs: the server running it numbers them and publishes them on the
 *   store's event bus (PostgreSQL NOTIFY), which every server keeps the current run of
 *   (src/serve/live-replay.ts); on a store without one, this process's own sessions'. A
 *   stream that opens late or reconnects gets the current run's events again. A model call
 *   streams (text and tool-call deltas) only while someone follows the session: a stream
 *   open on any server, or a send answered at once (src/serve/followers.ts).
 * - `done` once the journal reaches the done state, then the stream ends.
 * Every `entry` and `session` message has an id (opaque); Last-Event-ID resumes after it.
 * Auth: the bearer token, or `?ticket=` (src/http/stream-tickets.ts), checked in app.ts.
 */
import { streamSSE } from 'hono/streaming';
import type { RouteModule } from '../route.js';
import { query, sessionId } from '../route.js';
import { parseOr400, sessionNotFound } from '../../http/errors.js';
import { ErrorBody, StreamCursor, StreamQuery } from '../schemas.js';
import { writeStream } from '../stream-writer.js';
import { TOO_MANY_STREAMS } from '../../http/stream-slots.js';

export const stream: RouteModule = {
  doc: {
    method: 'get',
    path: '/sessions/{id}/stream',
    ticketed: true,
    summary: "Server-Sent Events: the session's journal entries as they are written and its live events (from any server), then `done`",
    query: StreamQuery,
    headers: { 'Last-Event-ID': 'the `id` of the last message received: the stream resumes after it (EventSource sends it on reconnect)' },
    responses: {
      200: {
        description:
          '`event: hello` first; `event: entry` (data: a journal entry; durable, resumable) and `event: session` ' +
          "(data: a live library event, SessionStreamEvent, text deltas included; the current run's are replayed to a " +
          'late or reconnecting client; a model call streams its deltas only if a stream followed the session, on any server, ' +
          'or a send was answered with 202, when it started) … `event: done`; `event: error` (data: { error }) when the store fails. Every ' +
          'entry and session message has an opaque `id:` for Last-Event-ID',
        contentType: 'text/event-stream',
      },
      400: { description: 'Bad query or Last-Event-ID', schema: ErrorBody },
      401: { description: 'Missing or wrong bearer token, or a stream ticket that is expired, malformed or for another session', schema: ErrorBody },
      404: { description: 'No such session', schema: ErrorBody },
      429: { description: TOO_MANY_STREAMS, schema: ErrorBody },
    },
  },
  mount(app, deps) {
    app.get('/sessions/:id/stream', async (c) => {
      const id = sessionId(c);
      const lastEventId = c.req.header('last-event-id');
      const asked = query(c, StreamQuery);
      const start = lastEventId !== undefined ? parseOr400(StreamCursor, lastEventId, 'Last-Event-ID header') : { after: asked.after ?? 0, live: null };
      if (!(await deps.store.load(id))) throw sessionNotFound(id);
      // One of the caller's open streams, given back when this one ends (a 429 past the limit).
      const release = deps.streamSlots?.take(c.get('caller')) ?? (() => {});
      try {
        return streamSSE(c, async (sse) => {
          try {
            await writeStream(sse, { sessionId: id, ...start }, deps);
          } finally {
            release();
          }
        });
      } catch (error) {
        release();
        throw error;
      }
    });
  },
};
