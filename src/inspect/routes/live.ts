/**
 * GET /api/live: the ids of the sessions this inspector runs (its runtime's live sessions, not stopped).
 * The sessions list is serve's (from the store, paged); which of them run here is the
 * inspector's own fact, so the page asks for it beside the list.
 */
import type { Hono } from 'hono';
import { json, type InspectorContext } from './context.js';

export function liveRoute(app: Hono, ctx: InspectorContext): void {
  // A session the runtime stopped (closed after a create, or taken over) runs nowhere here.
  app.get('/live', (c) => json(c, { ids: [...ctx.runtime.live.values()].filter((s) => s.actorRef.getSnapshot().status !== 'stopped').map((s) => s.id) }));
}
