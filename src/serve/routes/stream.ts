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
import { createRoute } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import * as z from 'zod';
import { defineRoute, jsonContent } from '../../http/route.js';
import { TOO_MANY_STREAMS } from '../../http/stream-slots.js';
import { SessionIdParams, TICKETED, type ServeDeps } from '../route.js';
import { ErrorBody, StreamCursor, StreamQuery } from '../schemas.js';
import { writeStream } from '../stream-writer.js';

export const stream = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions/{id}/stream',
    summary: "Server-Sent Events: the session's journal entries as they are written and its live events (from any server), then `done`",
    security: TICKETED,
    request: {
      params: SessionIdParams,
      query: StreamQuery,
      headers: z.object({
        'Last-Event-ID': StreamCursor.optional().describe(
          'the `id` of the last message received: the stream resumes after it (EventSource sends it on reconnect)',
        ),
      }),
    },
    responses: {
      200: {
        description:
          '`event: hello` first; `event: entry` (data: a journal entry; durable, resumable) and `event: session` ' +
          "(data: a live library event, SessionStreamEvent, text deltas included; the current run's are replayed to a " +
          'late or reconnecting client; a model call streams its deltas only if a stream followed the session, on any server, ' +
          'or a send was answered with 202, when it started) … `event: done`; `event: error` (data: { error }) when the store fails. Every ' +
          'entry and session message has an opaque `id:` for Last-Event-ID',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      400: jsonContent('Bad query or Last-Event-ID', ErrorBody),
      401: jsonContent('Missing or wrong bearer token, or a stream ticket that is expired, malformed or for another session', ErrorBody),
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
      429: jsonContent(TOO_MANY_STREAMS, ErrorBody),
    },
  }),
  (deps: ServeDeps) => async (c) => {
    const { id } = c.req.valid('param');
    const cursor = c.req.valid('header')['Last-Event-ID'];
    const start = cursor ?? { after: c.req.valid('query').after ?? 0, live: null };
    // The caller of the bearer token, or the one its ticket carries.
    await deps.access.requireExisting(c.get('caller'), id, 'read');
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
  },
);
