/**
 * GET /api/sessions/:id/journal?afterSeq&limit&payload=0: journal entries (payload=0:
 * without payloads, for the timeline, but with who acted: `by` of a user event).
 */
import type { Hono } from 'hono';
import { countParam, json, type InspectorContext } from './context.js';
import { userOf } from '../../store/session-store.js';

export function journalRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/sessions/:id/journal', async (c) => {
    const afterSeq = countParam(c, 'afterSeq') ?? 0;
    const limit = countParam(c, 'limit');
    const entries = await ctx.store.journal(c.req.param('id'), { afterSeq, ...(limit !== undefined ? { limit } : {}) });
    const lean = c.req.query('payload') === '0';
    const byOf = (payload: unknown) => {
      const by = userOf(payload);
      return by !== undefined ? { by } : {};
    };
    return json(c, { entries: lean ? entries.map(({ payload, ...rest }) => ({ ...rest, ...byOf(payload) })) : entries });
  });
}
