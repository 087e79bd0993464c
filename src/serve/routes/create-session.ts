import { createRoute } from '@hono/zod-openapi';
import { defineRoute, jsonContent } from '../../http/route.js';
import { admitCreate, CREATE_LIMIT_RESPONSE } from '../create-limit.js';
import { BEARER, ownerOf, type ServeDeps } from '../route.js';
import { CreateSessionBody, ErrorBody, ViewResponse } from '../schemas.js';

export const createSession = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions',
    summary:
      "Create a session; it waits for its first input (or for a package to be chosen). It belongs to the caller (a named token's name: its `owner`), " +
      'and `participants` (names, group:NAME) see and decide it too',
    security: BEARER,
    request: { body: { required: false, content: { 'application/json': { schema: CreateSessionBody } } } },
    responses: {
      201: jsonContent('The new session', ViewResponse),
      400: jsonContent('Bad body or unknown package', ErrorBody),
      429: CREATE_LIMIT_RESPONSE,
    },
  }),
  ({ host, createLimit }: ServeDeps) =>
    async (c) => {
      const body = c.req.valid('json');
      const created = await host.create({
        ...(body.packageId !== undefined ? { packageId: body.packageId } : {}),
        ...(body.maxBurst !== undefined ? { maxBurst: body.maxBurst } : {}),
        owner: ownerOf(c.get('caller')),
        ...(body.participants !== undefined ? { participants: body.participants } : {}),
        admit: () => admitCreate(createLimit, c.get('caller')),
      });
      return c.json(created, 201);
    },
);
