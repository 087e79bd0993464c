/**
 * GET /api/stream?session=ID: Server-Sent Events telling the page *that* something changed
 * (the session it has open, the list, pending model requests). hono's streamSSE keeps the
 * response open until the page leaves or the inspector closes.
 */
import { createRoute } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import * as z from 'zod';
import { defineRoute } from '../../http/route.js';
import type { InspectorContext } from './context.js';

export const streamRoute = defineRoute(
  createRoute({
    method: 'get',
    path: '/stream',
    summary: 'Server-Sent Events: that the open session, the list or the pending model requests changed',
    // Not strict: the page's `?token=` rides along.
    request: { query: z.object({ session: z.string().optional().describe('the session the page has open') }) },
    responses: { 200: { description: 'A text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
  }),
  (ctx: InspectorContext) => (c) => {
    const sessionId = c.req.valid('query').session || null;
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
  },
);
