/** GET /api/sessions/:id: the session's view and context, live or as stored. */
import { createRoute } from '@hono/zod-openapi';
import { defineRoute } from '../../http/route.js';
import { InspectorSessionParams, json, type InspectorContext } from './context.js';
import { sessionPayload } from './session-access.js';

export const sessionRoute = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions/{id}',
    summary: "The session's view and context, live or as stored",
    request: { params: InspectorSessionParams },
    responses: { 200: { description: 'id, revision, live, the view and the context' } },
  }),
  (ctx: InspectorContext) => async (c) => json(c, await sessionPayload(ctx, c.req.valid('param').id)),
);
