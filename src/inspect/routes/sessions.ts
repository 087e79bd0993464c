/** GET /api/sessions: the store's sessions; POST /api/sessions: a new one (optionally of a package). */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';
import { jsonBody } from '../../http/body.js';
import { listAll } from '../../store/list-page.js';

export function sessionsRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/sessions', async (c) => {
    const list = await listAll(ctx.store);
    return json(c, { sessions: list.map((s) => ({ ...s, live: ctx.runtime.live.has(s.id) })) });
  });
  app.post('/sessions', async (c) => {
    const body = (await jsonBody(c, {})) as { packageId?: unknown } | null;
    const packageId = typeof body?.packageId === 'string' && body.packageId ? body.packageId : undefined;
    const session = await ctx.runtime.createSession(packageId ? { packageId } : {});
    return json(c, { id: session.id, view: session.view() }, 201);
  });
}
