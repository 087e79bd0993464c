/** POST /sessions/:id/fork — a new session from this one's state after a journal entry, as `steward fork` (runtime.forkSession). */
import type { RouteModule } from '../route.js';
import { sessionId } from '../route.js';
import { jsonBody } from '../../http/body.js';
import { parseOr400 } from '../../http/errors.js';
import { ErrorBody, ForkBody, ViewResponse } from '../schemas.js';
import { admitCreate, CREATE_LIMIT_RESPONSE } from '../create-limit.js';

export const forkSession: RouteModule = {
  doc: {
    method: 'post',
    path: '/sessions/{id}/fork',
    summary:
      "Fork: a new session whose state is this one's after journal entry `atSeq` (default: the last), replayed through the machine; the original is not touched. A model call in flight at that entry runs again in the fork before the answer",
    body: ForkBody,
    responses: {
      201: { description: 'The new session', schema: ViewResponse },
      400: { description: 'Bad body, or `atSeq` is no entry of the session', schema: ErrorBody },
      404: { description: 'No such session', schema: ErrorBody },
      409: { description: 'A session with the given `id` exists already', schema: ErrorBody },
      429: CREATE_LIMIT_RESPONSE,
    },
  },
  mount(app, { host, createLimit }) {
    app.post('/sessions/:id/fork', async (c) => {
      const id = sessionId(c);
      const body = parseOr400(ForkBody, await jsonBody(c, {}), 'body');
      const fork = await host.fork(id, {
        ...(body.atSeq !== undefined ? { atSeq: body.atSeq } : {}),
        ...(body.id !== undefined ? { id: body.id } : {}),
        admit: () => admitCreate(createLimit, c.get('caller')),
      });
      return c.json(fork, 201);
    });
  },
};
