/** POST /sessions/:id/fork — a new session from this one's state after a journal entry, as `steward fork` (runtime.forkSession). */
import { createRoute } from '@hono/zod-openapi';
import { defineRoute, jsonContent } from '../../http/route.js';
import { admitCreate, CREATE_LIMIT_RESPONSE } from '../create-limit.js';
import { BEARER, ownerOf, SessionIdParams, type ServeDeps } from '../route.js';
import { ErrorBody, ForkBody, ViewResponse } from '../schemas.js';

export const forkSession = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/fork',
    summary:
      "Fork: a new session whose state is this one's after journal entry `atSeq` (default: the last), replayed through the machine; the original is not touched. A model call in flight at that entry runs again in the fork before the answer. " +
      'The fork belongs to the caller, who must be able to see the original',
    security: BEARER,
    request: { params: SessionIdParams, body: { required: false, content: { 'application/json': { schema: ForkBody } } } },
    responses: {
      201: jsonContent('The new session', ViewResponse),
      400: jsonContent('Bad body, or `atSeq` is no entry of the session', ErrorBody),
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
      409: jsonContent('A session with the given `id` exists already', ErrorBody),
      429: CREATE_LIMIT_RESPONSE,
    },
  }),
  ({ host, createLimit, access }: ServeDeps) =>
    async (c) => {
      const body = c.req.valid('json');
      const { id } = c.req.valid('param');
      // Forking reads the original (it copies its state); the fork is the caller's own.
      await access.require(c.get('caller'), id, 'read');
      const fork = await host.fork(id, {
        ...(body.atSeq !== undefined ? { atSeq: body.atSeq } : {}),
        ...(body.id !== undefined ? { id: body.id } : {}),
        owner: ownerOf(c.get('caller')),
        ...(body.participants !== undefined ? { participants: body.participants } : {}),
        admit: () => admitCreate(createLimit, c.get('caller')),
      });
      return c.json(fork, 201);
    },
);
