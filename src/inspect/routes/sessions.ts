/** GET /api/sessions: the store's sessions; POST /api/sessions: a new one (optionally of a package). */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';
import { jsonBody } from '../../http/body.js';
import { parseOr400 } from '../../http/errors.js';
import { CreateSessionBody } from '../../serve/schemas.js';
import { listAll } from '../../store/list-page.js';

export function sessionsRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/sessions', async (c) => {
    const list = await listAll(ctx.store);
    return json(c, { sessions: list.map((s) => ({ ...s, live: ctx.runtime.live.has(s.id) })) });
  });
  app.post('/sessions', async (c) => {
    // The body `steward serve` takes for a new session, checked by the same schema.
    const { packageId, maxBurst } = parseOr400(CreateSessionBody, await jsonBody(c, {}), 'body');
    const session = await ctx.runtime.createSession({ ...(packageId !== undefined ? { packageId } : {}), ...(maxBurst !== undefined ? { maxBurst } : {}) });
    return json(c, { id: session.id, view: session.view() }, 201);
  });
}
