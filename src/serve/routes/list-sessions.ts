import { createRoute } from '@hono/zod-openapi';
import { InvalidCursorError } from '../../core/errors.js';
import { HttpError } from '../../http/errors.js';
import { defineRoute, jsonContent } from '../../http/route.js';
import { BEARER, type ServeDeps } from '../route.js';
import { ErrorBody, ListQuery, ListResponse } from '../schemas.js';

const DEFAULT_LIMIT = 50;

export const listSessions = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions',
    summary:
      'The sessions the caller may see (its own, those naming it or one of its groups; all of them for the `admin` group and a caller that names no one), ' +
      'most recently updated first, a page at a time (`next` is the `cursor` of the next page)',
    security: BEARER,
    request: { query: ListQuery },
    responses: {
      200: jsonContent('One page', ListResponse),
      400: jsonContent('Bad query or cursor', ErrorBody),
    },
  }),
  ({ access }: ServeDeps) =>
    async (c) => {
      const { limit = DEFAULT_LIMIT, cursor } = c.req.valid('query');
      try {
        // The store reads one page (keyset on updated_at, id), never every session, of those the caller may see.
        return c.json(await access.list(c.get('caller'), { limit, after: cursor ?? null }), 200);
      } catch (error) {
        if (!InvalidCursorError.isInstance(error)) throw error;
        throw new HttpError(400, 'invalid_request', error.message, [{ path: 'cursor', message: error.message }]);
      }
    },
);
