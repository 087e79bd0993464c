/** POST /api/sessions/:id/resume: resumes a stored session here (an interrupted model call runs again). */
import { createRoute } from '@hono/zod-openapi';
import { defineRoute } from '../../http/route.js';
import { InspectorSessionParams, json, type InspectorContext } from './context.js';

export const resumeRoute = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/resume',
    summary: 'Resume a stored session in this process',
    request: { params: InspectorSessionParams },
    responses: { 200: { description: '{ ok, view }' } },
  }),
  (ctx: InspectorContext) => async (c) => {
    const session = await ctx.runtime.resumeSession(c.req.valid('param').id);
    ctx.hub.touch(session.id);
    return json(c, { ok: true, view: session.view() });
  },
);
