/** GET /api/info: the machine's graph, the model, the packages and the user event types. */
import type { Hono } from 'hono';
import { userEventTypes } from '../../core/machines/session.events.js';
import { json, type InspectorContext } from './context.js';

export function infoRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/info', (c) =>
    json(c, {
      machineId: ctx.graph.id,
      graph: ctx.graph,
      model: { label: ctx.runtime.model.label, manual: !!ctx.manual },
      sessionId: ctx.sessionId,
      packages: [...ctx.runtime.packages.values()].map((p) => ({ id: p.id, title: p.title })),
      events: userEventTypes,
    }),
  );
}
