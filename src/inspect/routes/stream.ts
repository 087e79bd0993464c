/**
 * GET /api/stream?session=ID: Server-Sent Events telling the page *that* something changed
 * (the session it has open, the list, pending model requests). hono's streamSSE keeps the
 * response open until the page leaves or the inspector closes.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { InspectorContext } from './context.js';

export function streamRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/stream', (c) => {
    const sessionId = c.req.query('session') || null;
    c.header('x-accel-buffering', 'no');
    c.header('cache-control', 'no-cache, no-transform');
    return streamSSE(c, async (stream) => {
      await new Promise<void>((ended) => {
        const detach = ctx.hub.attach({ write: (text) => void stream.write(text), end: ended }, sessionId);
        stream.onAbort(() => {
          detach();
          ended();
        });
      });
    });
  });
}
