/** POST /api/sessions/:id/events: sends a user event (the session's zod schema checks it). */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';
import { jsonBody } from '../../http/body.js';
import { sendEvent } from './session-access.js';

export function eventsRoute(app: Hono, ctx: InspectorContext): void {
  app.post('/sessions/:id/events', async (c) => {
    const event = await jsonBody(c, {});
    return json(c, await sendEvent(ctx, c.req.param('id'), event));
  });
}
