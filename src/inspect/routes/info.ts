/** GET /api/info: the machine's graph, the model, the packages and the user event types. */
import { createRoute } from '@hono/zod-openapi';
import { defineRoute } from '../../http/route.js';
import { userEventTypes } from '../../core/machines/session.events.js';
import { json, type InspectorContext } from './context.js';

export const infoRoute = defineRoute(
  createRoute({
    method: 'get',
    path: '/info',
    summary: "The machine's graph, the model, the packages and the user event types",
    responses: { 200: { description: 'What the page draws and offers' } },
  }),
  (ctx: InspectorContext) => (c) =>
    json(c, {
      machineId: ctx.graph.id,
      graph: ctx.graph,
      model: { label: ctx.runtime.model.label, manual: !!ctx.manual },
      sessionId: ctx.sessionId,
      packages: [...ctx.runtime.packages.values()].map((p) => ({ id: p.id, title: p.title })),
      events: userEventTypes,
      keepsLayouts: ctx.layouts !== null,
    }),
);
