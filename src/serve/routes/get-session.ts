import { createRoute } from '@hono/zod-openapi';
import { defineRoute, jsonContent } from '../../http/route.js';
import { BEARER, SessionIdParams, type ServeDeps } from '../route.js';
import { ErrorBody, ViewResponse } from '../schemas.js';

export const getSession = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions/{id}',
    summary: "The session's view and revision",
    security: BEARER,
    request: { params: SessionIdParams },
    responses: {
      200: jsonContent('The view', ViewResponse),
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
    },
  }),
  ({ host, access }: ServeDeps) =>
    async (c) => {
      const { id } = c.req.valid('param');
      // The access check's read, when it made one, is the view's too.
      const read = await access.require(c.get('caller'), id, 'read');
      return c.json(await host.view(id, read), 200);
    },
);
