/**
 * POST /api/sessions/:id/fork { atSeq }: a new session from this one's state after journal
 * entry atSeq (runtime.forkSession); the original is not touched. Answers with the fork's
 * id once it waits for the user (a model call in flight at atSeq runs again first).
 */
import type { Hono } from 'hono';
import * as z from 'zod';
import { json, type InspectorContext } from './context.js';
import { HttpError } from '../../http/errors.js';
import { jsonBody } from '../../http/body.js';

const ForkBody = z.strictObject({ atSeq: z.number().int().positive() });

export function forkRoute(app: Hono, ctx: InspectorContext): void {
  app.post('/sessions/:id/fork', async (c) => {
    const parsed = ForkBody.safeParse(await jsonBody(c, {}));
    if (!parsed.success) throw new HttpError(400, 'invalid_request', 'The body is { "atSeq": N }, N a journal entry of the session (1, 2, …).');
    const fork = await ctx.runtime.forkSession(c.req.param('id'), { atSeq: parsed.data.atSeq });
    const view = await fork.settled();
    ctx.hub.touch(fork.id);
    return json(c, { id: fork.id, view });
  });
}
