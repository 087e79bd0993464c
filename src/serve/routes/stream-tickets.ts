/**
 * POST /sessions/:id/stream-tickets — a ticket that opens this session's stream for a
 * minute as the caller (src/http/stream-tickets.ts): what a page hands an EventSource
 * instead of putting its long-lived token in a URL.
 */
import type { RouteModule } from '../route.js';
import { sessionId } from '../route.js';
import { jsonBody } from '../../http/body.js';
import { parseOr400, sessionNotFound } from '../../http/errors.js';
import { ErrorBody, StreamTicketBody, StreamTicketResponse } from '../schemas.js';

export const streamTickets: RouteModule = {
  doc: {
    method: 'post',
    path: '/sessions/{id}/stream-tickets',
    summary: "A ticket for `GET /sessions/{id}/stream?ticket=…`: that session's stream only, for 60 s, as the caller (an EventSource cannot send headers)",
    body: StreamTicketBody,
    responses: {
      201: { description: 'The ticket', schema: StreamTicketResponse },
      404: { description: 'No such session', schema: ErrorBody },
    },
  },
  mount(app, { store, tickets }) {
    app.post('/sessions/:id/stream-tickets', async (c) => {
      const id = sessionId(c);
      parseOr400(StreamTicketBody, await jsonBody(c, {}), 'body');
      if (!(await store.load(id))) throw sessionNotFound(id);
      return c.json(StreamTicketResponse.parse(tickets.issue(id, c.get('caller'))), 201);
    });
  },
};
