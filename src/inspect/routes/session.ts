/** GET /api/sessions/:id: the session's view and context, live or as stored. */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';
import { sessionPayload } from './session-access.js';

export function sessionRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/sessions/:id', async (c) => json(c, await sessionPayload(ctx, c.req.param('id'))));
}
