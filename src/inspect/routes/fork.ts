/**
 * POST /api/sessions/:id/fork { atSeq }: a new session from this one's state after journal
 * entry atSeq (runtime.forkSession); the original is not touched. Answers with the fork's
 * id once it waits for the user (a model call in flight at atSeq runs again first).
 */
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { readJsonBody } from '../../http/body.js';
import { HttpError } from '../../http/errors.js';
import { defineRoute } from '../../http/route.js';
import { InspectorSessionParams, json, type InspectorContext } from './context.js';

const ForkBody = z.strictObject({ atSeq: z.number().int().positive() });

export const forkRoute = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/fork',
    summary: "A new session from this one's state after journal entry `atSeq`",
    // Checked when empty too: an empty body is `{}`, which has no atSeq.
    middleware: readJsonBody({ emptyAs: {} }),
    request: { params: InspectorSessionParams, body: { required: true, content: { 'application/json': { schema: ForkBody } } } },
    responses: { 200: { description: "The fork's id and view" } },
  }),
  (ctx: InspectorContext) => async (c) => {
    const fork = await ctx.runtime.forkSession(c.req.valid('param').id, { atSeq: c.req.valid('json').atSeq });
    const view = await fork.settled();
    ctx.hub.touch(fork.id);
    return json(c, { id: fork.id, view });
  },
  (result) => {
    if (!result.success) throw new HttpError(400, 'invalid_request', 'The body is { "atSeq": N }, N a journal entry of the session (1, 2, …).');
  },
);
