import type { RouteModule } from '../route.js';
import { query } from '../route.js';
import { HttpError } from '../../http/errors.js';
import { InvalidCursorError } from '../../core/errors.js';
import { ErrorBody, ListQuery, ListResponse } from '../schemas.js';

const DEFAULT_LIMIT = 50;

export const listSessions: RouteModule = {
  doc: {
    method: 'get',
    path: '/sessions',
    summary: 'The sessions, most recently updated first, a page at a time (`next` is the `cursor` of the next page)',
    query: ListQuery,
    responses: {
      200: { description: 'One page', schema: ListResponse },
      400: { description: 'Bad query or cursor', schema: ErrorBody },
    },
  },
  mount(app, { store }) {
    app.get('/sessions', async (c) => {
      const { limit = DEFAULT_LIMIT, cursor } = query(c, ListQuery);
      try {
        // The store reads one page (keyset on updated_at, id), never every session.
        return c.json(await store.list({ limit, after: cursor ?? null }));
      } catch (error) {
        if (!InvalidCursorError.isInstance(error)) throw error;
        throw new HttpError(400, 'invalid_request', error.message, [{ path: 'cursor', message: error.message }]);
      }
    });
  },
};
