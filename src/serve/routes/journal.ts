import type { RouteModule } from '../route.js';
import { query, sessionId } from '../route.js';
import { sessionNotFound } from '../../http/errors.js';
import { ErrorBody, JournalQuery, JournalResponse } from '../schemas.js';

const DEFAULT_LIMIT = 200;

export const journal: RouteModule = {
  doc: {
    method: 'get',
    path: '/sessions/{id}/journal',
    summary: "The session's journal in seq order: every event (refused ones too) and model result",
    query: JournalQuery,
    responses: {
      200: { description: 'A page of entries', schema: JournalResponse },
      400: { description: 'Bad query', schema: ErrorBody },
      404: { description: 'No such session', schema: ErrorBody },
    },
  },
  mount(app, { store }) {
    app.get('/sessions/:id/journal', async (c) => {
      const id = sessionId(c);
      const { after = 0, limit = DEFAULT_LIMIT } = query(c, JournalQuery);
      const entries = await store.journal(id, { afterSeq: after, limit });
      if (entries.length === 0 && !(await store.load(id))) {
        throw sessionNotFound(id);
      }
      return c.json({ entries, next: entries.length === limit ? entries.at(-1)!.seq : null });
    });
  },
};
