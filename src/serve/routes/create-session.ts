import type { RouteModule } from '../route.js';
import { jsonBody } from '../../http/body.js';
import { errorResponse, HttpError, parseOr400 } from '../../http/errors.js';
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
      429: { description: 'This caller created too many sessions in the last minute: retry after the `Retry-After` header (seconds)', schema: ErrorBody },
    },
  },
  mount(app, { host, createLimit }) {
    app.post('/sessions', async (c) => {
      const body = parseOr400(CreateSessionBody, await jsonBody(c, {}), 'body');
      if (createLimit) {
        // Callers are told apart by the token the auth middleware verified, never by the
        // header's spelling (hono takes "bearer", "Bearer  " …): a new spelling must not buy
        // a new allowance. Without tokens every caller is the same one.
        const decision = createLimit.take(c.get('caller')?.name ?? 'anonymous');
        if (!decision.ok) {
          c.header('Retry-After', String(decision.retryAfterSeconds));
          const refusal = new HttpError(
            429,
            'rate_limited',
            `Too many sessions created: ${createLimit.perMinute} per minute per caller is this server's limit. ` +
              `Retry in ${decision.retryAfterSeconds} s, reuse a session, or start the server with a higher --max-creates-per-minute (startServe maxCreatesPerMinute; 0: no limit).`,
          );
          return errorResponse(c, refusal);
        }
      }
      const created = await host.create({
        ...(body.packageId !== undefined ? { packageId: body.packageId } : {}),
        ...(body.maxBurst !== undefined ? { maxBurst: body.maxBurst } : {}),
      });
      return c.json(created, 201);
    });
  },
};
