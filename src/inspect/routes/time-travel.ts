/** GET /api/sessions/:id/at/:seq: the state and context after journal entry `seq`, rebuilt by replay (read-only). */
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { storedSnapshot } from '../../runtime/persisted.js';
import { sessionView } from '../../core/view.js';
import { HttpError, sessionNotFound } from '../../http/errors.js';
import { defineRoute } from '../../http/route.js';
import { snapshotState } from '../replay.js';
import { json, type InspectorContext } from './context.js';

const TimeTravelParams = z.object({ id: z.string(), seq: z.string().transform(Number).pipe(z.int().min(1)) });

export const timeTravelRoute = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions/{id}/at/{seq}',
    summary: 'The state and context after journal entry `seq`, rebuilt by replay',
    request: { params: TimeTravelParams },
    responses: { 200: { description: 'seq, the replayed and the recorded state, the entry, the view and the context' } },
  }),
  (ctx: InspectorContext) => async (c) => {
    const { id, seq } = c.req.valid('param');
    const entries = await ctx.store.journal(id, { limit: seq });
    if (entries.length === 0) throw sessionNotFound(id, '');
    const stored = await ctx.store.load(id);
    const current = stored ? storedSnapshot(ctx.runtime.machine, stored).context : undefined;
    const point = ctx.replayer.at(id, entries, seq, current);
    return json(c, {
      seq: point.seq,
      state: snapshotState(point.snapshot),
      recordedState: entries[point.seq - 1]?.state ?? null,
      entry: entries[point.seq - 1] ?? null,
      ...(point.divergedAt !== undefined ? { divergedAt: point.divergedAt } : {}),
      view: sessionView(point.snapshot),
      context: point.snapshot.context,
    });
  },
  (result, c) => {
    if (!result.success) throw new HttpError(400, 'invalid_request', `Journal entry "${c.req.param('seq')}" is not a number ≥ 1.`);
  },
);
