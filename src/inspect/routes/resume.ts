/** POST /api/sessions/:id/resume: resumes a stored session here (an interrupted model call runs again). */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';

export function resumeRoute(app: Hono, ctx: InspectorContext): void {
  app.post('/sessions/:id/resume', async (c) => {
    const session = await ctx.runtime.resumeSession(c.req.param('id'));
    ctx.hub.touch(session.id);
    return json(c, { ok: true, view: session.view() });
  });
}
