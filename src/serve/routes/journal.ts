import { createRoute } from '@hono/zod-openapi';
import { sessionNotFound } from '../../http/errors.js';
import { defineRoute, jsonContent } from '../../http/route.js';
import { BEARER, SessionIdParams, type ServeDeps } from '../route.js';
import { ErrorBody, JournalQuery, JournalResponse } from '../schemas.js';

const DEFAULT_LIMIT = 200;

export const journal = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions/{id}/journal',
    summary: "The session's journal in seq order: every event (refused ones too) and model result",
    security: BEARER,
    request: { params: SessionIdParams, query: JournalQuery },
    responses: {
      200: jsonContent('A page of entries', JournalResponse),
      400: jsonContent('Bad query', ErrorBody),
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
    },
  }),
  ({ store, access }: ServeDeps) =>
    async (c) => {
      const { id } = c.req.valid('param');
      const { after = 0, limit = DEFAULT_LIMIT } = c.req.valid('query');
      await access.require(c.get('caller'), id, 'read');
      const entries = await store.journal(id, { afterSeq: after, limit });
      if (entries.length === 0 && !(await store.load(id))) {
        throw sessionNotFound(id);
      }
      return c.json({ entries, next: entries.length === limit ? entries.at(-1)!.seq : null }, 200);
    },
);
