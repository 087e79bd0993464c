import type { RouteModule } from '../route.js';
import { sessionId } from '../route.js';
import { ErrorBody, ViewResponse } from '../schemas.js';

export const getSession: RouteModule = {
  doc: {
    method: 'get',
    path: '/sessions/{id}',
    summary: "The session's view and revision",
    responses: {
      200: { description: 'The view', schema: ViewResponse },
      404: { description: 'No such session', schema: ErrorBody },
    },
  },
  mount(app, { host }) {
    app.get('/sessions/:id', async (c) => c.json(await host.view(sessionId(c))));
  },
};
