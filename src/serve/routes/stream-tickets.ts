/**
 * POST /sessions/:id/stream-tickets — a ticket that opens this session's stream for a
 * minute as the caller (src/http/stream-tickets.ts): what a page hands an EventSource
 * instead of putting its long-lived token in a URL.
 */
import { createRoute } from '@hono/zod-openapi';
import { defineRoute, jsonContent } from '../../http/route.js';
import { BEARER, SessionIdParams, type ServeDeps } from '../route.js';
import { ErrorBody, StreamTicketBody, StreamTicketResponse } from '../schemas.js';

export const streamTickets = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/stream-tickets',
    summary: "A ticket for `GET /sessions/{id}/stream?ticket=…`: that session's stream only, for 60 s, as the caller (an EventSource cannot send headers)",
    security: BEARER,
    request: { params: SessionIdParams, body: { required: false, content: { 'application/json': { schema: StreamTicketBody } } } },
    responses: {
      201: jsonContent('The ticket', StreamTicketResponse),
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
    },
  }),
  ({ tickets, access }: ServeDeps) =>
    async (c) => {
      const { id } = c.req.valid('param');
      // A ticket opens the stream as its caller (checked again there): only for a session they may see.
      await access.requireExisting(c.get('caller'), id, 'read');
      return c.json(StreamTicketResponse.parse(tickets.issue(id, c.get('caller'))), 201);
    },
);
