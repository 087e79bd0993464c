/** POST /api/sessions/:id/events: sends a user event (the session's zod schema checks it). */
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { defineRoute } from '../../http/route.js';
import { InspectorSessionParams, json, type InspectorContext } from './context.js';
import { sendEvent } from './session-access.js';

export const eventsRoute = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/events',
    summary: 'Send a user event; answers once the session waits again, or after a grace period with `settled: false`',
    // Any JSON: session.send() checks the event and answers a refusal in its result.
    request: { params: InspectorSessionParams, body: { required: false, content: { 'application/json': { schema: z.unknown() } } } },
    responses: { 200: { description: 'The send: ok, settled, the view (and the error of a refusal)' } },
  }),
  (ctx: InspectorContext) => async (c) => json(c, await sendEvent(ctx, c.req.valid('param').id, c.req.valid('json'))),
);
