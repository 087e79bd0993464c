import type { RouteModule } from '../route.js';
import { jsonBody } from '../../http/body.js';
import { parseOr400 } from '../../http/errors.js';
import { admitCreate, CREATE_LIMIT_RESPONSE } from '../create-limit.js';
import { CreateSessionBody, ErrorBody, ViewResponse } from '../schemas.js';

export const createSession: RouteModule = {
  doc: {
    method: 'post',
    path: '/sessions',
    summary: 'Create a session; it waits for its first input (or for a package to be chosen)',
    body: CreateSessionBody,
    responses: {
      201: { description: 'The new session', schema: ViewResponse },
      400: { description: 'Bad body or unknown package', schema: ErrorBody },
      429: CREATE_LIMIT_RESPONSE,
    },
  },
  mount(app, { host, createLimit }) {
    app.post('/sessions', async (c) => {
      const body = parseOr400(CreateSessionBody, await jsonBody(c, {}), 'body');
      const created = await host.create({
        ...(body.packageId !== undefined ? { packageId: body.packageId } : {}),
        ...(body.maxBurst !== undefined ? { maxBurst: body.maxBurst } : {}),
        admit: () => admitCreate(createLimit, c.get('caller')),
      });
      return c.json(created, 201);
    });
  },
};
