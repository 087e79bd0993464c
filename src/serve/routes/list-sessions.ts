import type { RouteModule } from '../route.js';
import { query } from '../route.js';
import { ErrorBody, ListQuery, ListResponse } from '../schemas.js';

const DEFAULT_LIMIT = 50;

export const listSessions: RouteModule = {
  doc: {
    method: 'get',
    path: '/sessions',
    summary: 'The sessions, most recently updated first, a page at a time',
    query: ListQuery,
    responses: {
      200: { description: 'One page', schema: ListResponse },
      400: { description: 'Bad query', schema: ErrorBody },
    },
  },
  mount(app, { store }) {
    app.get('/sessions', async (c) => {
      const { limit = DEFAULT_LIMIT, offset = 0 } = query(c, ListQuery);
      // SessionStore.list() has no paging yet: the page is cut here (fine for thousands).
      const all = await store.list();
      const sessions = all.slice(offset, offset + limit);
      return c.json({ sessions, total: all.length, next: offset + limit < all.length ? offset + limit : null });
    });
  },
};
