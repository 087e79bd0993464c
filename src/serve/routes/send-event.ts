import type { RouteModule } from '../route.js';
import { jsonBody, sessionId } from '../route.js';
import { clientResult, parseOr400, statusOf } from '../http-error.js';
import { ErrorBody, SendResultSchema, UserEventSchema } from '../schemas.js';

export const sendEvent: RouteModule = {
  doc: {
    method: 'post',
    path: '/sessions/{id}/events',
    summary: 'Send a user event; answers once the session waits for you again (or is done). Who acted: the event\'s `by`, else the X-Steward-User header',
    body: UserEventSchema,
    responses: {
      200: { description: 'Accepted: the SendResult with the new view', schema: SendResultSchema },
      400: { description: 'Not a user event (the issues say which field)', schema: ErrorBody },
      404: { description: 'No such session', schema: ErrorBody },
      409: { description: 'Refused by the session in its state, or another writer saved first (conflict), or it runs elsewhere: the SendResult with the structured error, state unchanged', schema: SendResultSchema },
      503: { description: 'The server is shutting down; the session is saved and resumes elsewhere', schema: SendResultSchema },
    },
  },
  mount(app, { host, log }) {
    app.post('/sessions/:id/events', async (c) => {
      const id = sessionId(c);
      const body = await jsonBody(c);
      // Who acted: the event's own `by`, else the X-Steward-User header (the server has one
      // shared token with no name to take it from); the session's zod schema bounds it.
      const user = c.req.header('x-steward-user');
      const withBy = user !== undefined && body && typeof body === 'object' && !Array.isArray(body) && !('by' in body) ? { ...body, by: user } : body;
      const event = parseOr400(UserEventSchema, withBy, 'event');
      const result = await host.send(id, event);
      if (result.ok) return c.json(result, 200);
      return c.json(clientResult(result, log), statusOf(result.error.code));
    });
  },
};
