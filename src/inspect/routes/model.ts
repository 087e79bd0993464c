/**
 * The manual model, played from the page: GET /api/model lists the pending requests;
 * POST /api/model/:id/reply answers one with tool calls, POST /api/model/:id/fail fails it.
 */
import type { Hono } from 'hono';
import type { ManualReply } from '../../models/manual-model.js';
import { snapshotState } from '../replay.js';
import { json, type InspectorContext } from './context.js';
import { HttpError } from '../../http/errors.js';
import { jsonBody } from '../../http/body.js';

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
  if (!ctx.manual)
    throw new HttpError(
      409,
      'not_manual',
      `The runtime's model is "${ctx.runtime.model.label}", not the manual model: start the inspector with --manual to play the model by hand.`,
    );
  return ctx.manual;
}

export function modelRoute(app: Hono, ctx: InspectorContext): void {
  app.get('/model', (c) => json(c, pendingModel(ctx)));

  app.post('/model/:id/reply', async (c) => {
    const manual = manualOf(ctx);
    const reply = (await jsonBody(c, {})) as ManualReply | null;
    if (!reply || typeof reply !== 'object') throw new HttpError(400, 'invalid_reply', 'A reply looks like { content?, toolCalls: [{ name, arguments }] }.');
    const calls = reply.toolCalls ?? [];
    if (!Array.isArray(calls) || calls.some((call) => !call || typeof call.name !== 'string' || !call.name)) {
      throw new HttpError(400, 'invalid_reply', 'Each tool call needs a "name" (and "arguments": an object or JSON text).');
    }
    manual.reply(c.req.param('id'), {
      content: typeof reply.content === 'string' && reply.content.trim() ? reply.content : null,
      toolCalls: calls.map((call) => ({ name: call.name, arguments: call.arguments ?? {} })),
    });
    return json(c, { ok: true });
  });

  app.post('/model/:id/fail', async (c) => {
    const manual = manualOf(ctx);
    const body = (await jsonBody(c, {})) as { message?: unknown } | null;
    manual.fail(c.req.param('id'), typeof body?.message === 'string' && body.message ? body.message : undefined);
    return json(c, { ok: true });
  });
}
