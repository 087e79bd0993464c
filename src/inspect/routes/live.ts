/**
 * GET /api/live: the ids of the sessions this inspector runs (its runtime's live sessions).
 * The sessions list is serve's (from the store, paged); which of them run here is the
 * inspector's own fact, so the page asks for it beside the list.
 */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';

export function liveRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/live', (c) => json(c, { ids: [...ctx.runtime.live.keys()] }));
}
