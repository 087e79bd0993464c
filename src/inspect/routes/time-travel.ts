/** GET /api/sessions/:id/at/:seq: the state and context after journal entry `seq`, rebuilt by replay (read-only). */
import type { Hono } from 'hono';
import { storedSnapshot } from '../../runtime/persisted.js';
import { sessionView } from '../../core/view.js';
import { snapshotState } from '../replay.js';
import { json, type InspectorContext } from './context.js';
import { HttpError, sessionNotFound } from '../../http/errors.js';

export function timeTravelRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/sessions/:id/at/:seq', async (c) => {
    const id = c.req.param('id');
    const text = c.req.param('seq');
    const seq = Number(text);
    if (!Number.isInteger(seq) || seq < 1) throw new HttpError(400, 'invalid_request', `Journal entry "${text}" is not a number ≥ 1.`);
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
  });
}
