/**
 * The manual model, played from the page: GET /api/model lists the pending requests;
 * POST /api/model/:id/reply answers one with tool calls, POST /api/model/:id/fail fails it.
 */
import type { Hono } from 'hono';
import type { ManualReply } from '../../models/manual-model.js';
import { snapshotState } from '../replay.js';
import { HttpError, json, readJson, type InspectorContext } from './context.js';

function pendingModel(ctx: InspectorContext) {
  const { manual, runtime } = ctx;
  if (!manual) return { manual: false, label: runtime.model.label, pending: [] };
  const running = [...runtime.live.values()].map((s) => ({ id: s.id, state: snapshotState(s.actorRef.getSnapshot()) }));
  return {
    manual: true,
    label: runtime.model.label,
    pending: manual.pending().map((p) => {
      const candidates = running.filter((s) => s.state.startsWith(`running.${p.agent}`));
      return {
        id: p.id,
        agent: p.agent,
        at: p.at,
        ...(candidates.length === 1 ? { sessionId: candidates[0]!.id } : {}),
        tools: p.request.tools,
        messages: p.request.messages,
      };
    }),
  };
}

function manualOf(ctx: InspectorContext) {
  if (!ctx.manual) throw new HttpError(409, `The runtime's model is "${ctx.runtime.model.label}", not the manual model: start the inspector with --manual to play the model by hand.`, 'not_manual');
  return ctx.manual;
}

export function modelRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/api/model', (c) => json(c, pendingModel(ctx)));

  app.post('/api/model/:id/reply', async (c) => {
    const manual = manualOf(ctx);
    const reply = (await readJson(c)) as ManualReply | null;
    if (!reply || typeof reply !== 'object') throw new HttpError(400, 'A reply looks like { content?, toolCalls: [{ name, arguments }] }.', 'invalid_reply');
    const calls = reply.toolCalls ?? [];
    if (!Array.isArray(calls) || calls.some((call) => !call || typeof call.name !== 'string' || !call.name)) {
      throw new HttpError(400, 'Each tool call needs a "name" (and "arguments": an object or JSON text).', 'invalid_reply');
    }
    manual.reply(c.req.param('id'), {
      content: typeof reply.content === 'string' && reply.content.trim() ? reply.content : null,
      toolCalls: calls.map((call) => ({ name: call.name, arguments: call.arguments ?? {} })),
    });
    return json(c, { ok: true });
  });

  app.post('/api/model/:id/fail', async (c) => {
    const manual = manualOf(ctx);
    const body = (await readJson(c)) as { message?: unknown } | null;
    manual.fail(c.req.param('id'), typeof body?.message === 'string' && body.message ? body.message : undefined);
    return json(c, { ok: true });
  });
}
