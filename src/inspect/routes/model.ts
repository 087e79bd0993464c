/**
 * The manual model, played from the page: GET /api/model lists the pending requests;
 * POST /api/model/:id/reply answers one with tool calls, POST /api/model/:id/fail fails it.
 */
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { snapshotState } from '../replay.js';
import { json, type InspectorContext } from './context.js';
import { HttpError } from '../../http/errors.js';
import { defineRoute, type RouteModule } from '../../http/route.js';

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

const RequestParams = z.object({ id: z.string().describe('the pending request') });

/** What a reply may carry; `arguments` an object or JSON text, as a model sends them. */
const ManualReplyBody = z.looseObject({
  content: z.unknown().optional(),
  toolCalls: z.array(z.looseObject({ name: z.string().min(1), arguments: z.unknown().optional() })).nullish(),
});

const pending = defineRoute(
  createRoute({
    method: 'get',
    path: '/model',
    summary: "The manual model's pending requests",
    responses: { 200: { description: '{ manual, label, pending }' } },
  }),
  (ctx: InspectorContext) => (c) => json(c, pendingModel(ctx)),
);

const reply = defineRoute(
  createRoute({
    method: 'post',
    path: '/model/{id}/reply',
    summary: 'Answer a pending request with text and tool calls',
    request: { params: RequestParams, body: { required: false, content: { 'application/json': { schema: ManualReplyBody } } } },
    responses: { 200: { description: '{ ok: true }' } },
  }),
  (ctx: InspectorContext) => (c) => {
    const manual = manualOf(ctx);
    const { content, toolCalls } = c.req.valid('json');
    manual.reply(c.req.valid('param').id, {
      content: typeof content === 'string' && content.trim() ? content : null,
      toolCalls: (toolCalls ?? []).map((call) => ({ name: call.name, arguments: call.arguments ?? {} })),
    });
    return json(c, { ok: true });
  },
  (result) => {
    if (result.success) return;
    // Not an object at all, or a tool call without its name: each says what a reply looks like.
    if (result.error.issues.some((i) => i.path.length === 0))
      throw new HttpError(400, 'invalid_reply', 'A reply looks like { content?, toolCalls: [{ name, arguments }] }.');
    throw new HttpError(400, 'invalid_reply', 'Each tool call needs a "name" (and "arguments": an object or JSON text).');
  },
);

const fail = defineRoute(
  createRoute({
    method: 'post',
    path: '/model/{id}/fail',
    summary: 'Fail a pending request (the model call errs with `message`)',
    request: { params: RequestParams, body: { required: false, content: { 'application/json': { schema: z.unknown() } } } },
    responses: { 200: { description: '{ ok: true }' } },
  }),
  (ctx: InspectorContext) => (c) => {
    const manual = manualOf(ctx);
    const body = c.req.valid('json') as { message?: unknown } | null;
    manual.fail(c.req.valid('param').id, typeof body?.message === 'string' && body.message ? body.message : undefined);
    return json(c, { ok: true });
  },
);

/** The routes that play the manual model. */
export const modelRoutes: readonly RouteModule<InspectorContext>[] = [pending, reply, fail];
