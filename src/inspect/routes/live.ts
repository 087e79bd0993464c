/**
 * GET /api/live: the ids of the sessions this inspector runs (its runtime's live sessions, not stopped).
 * The sessions list is serve's (from the store, paged); which of them run here is the
 * inspector's own fact, so the page asks for it beside the list.
 */
import { createRoute } from '@hono/zod-openapi';
import { defineRoute } from '../../http/route.js';
import { json, type InspectorContext } from './context.js';

export const liveRoute = defineRoute(
  createRoute({
    method: 'get',
    path: '/live',
    summary: 'The ids of the sessions that run in this process',
    responses: { 200: { description: '{ ids }' } },
  }),
  // A session the runtime stopped (closed after a create, or taken over) runs nowhere here.
  (ctx: InspectorContext) => (c) =>
    json(c, { ids: [...ctx.runtime.live.values()].filter((s) => s.actorRef.getSnapshot().status !== 'stopped').map((s) => s.id) }),
);
