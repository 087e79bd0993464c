import type { Context } from 'hono';
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { readJsonBody } from '../../http/body.js';
import { attribute, attributedAs } from '../../http/auth.js';
import { clientResult, HttpError, setRetryAfter, statusOf } from '../../http/errors.js';
import { defineRoute, jsonContent, refuseInvalid } from '../../http/route.js';
import { BEARER, SessionIdParams, type ServeDeps } from '../route.js';
import { AcceptedResponse, ErrorBody, IdempotencyKeyHeader, SendBadRequest, SendForbidden, SendQuery, SendResultSchema, UserEventSchema } from '../schemas.js';

/** Who acted, as claimed: the event's own `by`, else the X-Steward-User header (validated as the event's `by`). */
function withHeaderBy(body: unknown, c: Context): unknown {
  const user = c.req.header('x-steward-user');
  return user !== undefined && body && typeof body === 'object' && !Array.isArray(body) && !('by' in body) ? { ...body, by: user } : body;
}

export const sendEvent = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/events',
    summary:
      'Send a user event; answers once the session waits for you again (or is done), or at once with 202 when asked (`Prefer: respond-async`, `?wait=false`). Who acted: with ' +
      "named tokens, the token's name (an act-for-others token may name another, recorded with `via`: the " +
      "token); else the event's `by`, or the X-Steward-User header, as claimed. With an Idempotency-Key header the send counts " +
      'once: the same key again (on any server of the store, also after a restart) changes nothing and answers the stored ' +
      'result with `repeated: true`; the same key with another event is a 422 (idempotency_key_reused). An event naming the wait it ' +
      "answers (`wait`, the view's `wait`) is applied to that wait or not at all: once that wait is closed, the decision that " +
      'closed it again answers 200 with `repeated: true` (nothing applied), any other a 409 wait_closed. A wait whose worker names ' +
      "who decides it (`approvers`, `reviewers`) takes a decision only from a caller in one of those groups or in `admin` (the token's " +
      '`groups=`; a caller that sees every session decides as admin); anyone else gets 403 not_a_decider',
    security: BEARER,
    // The event validated is the body with the header's `by` in it: the session's zod schema bounds it.
    middleware: readJsonBody({ amend: withHeaderBy }),
    request: {
      params: SessionIdParams,
      query: SendQuery,
      headers: z.object({
        Prefer: z
          .string()
          .optional()
          .describe('`respond-async`: answer 202 as soon as the session took the event (the stream and GET /sessions/{id} tell the rest)'),
        'X-Steward-User': z.string().optional().describe("who acted, when the event names no `by` (with named tokens: held to the token's name)"),
        'Idempotency-Key': IdempotencyKeyHeader.optional().describe(
          'makes the send count once (1–200 of A–Z a–z 0–9 . _ : ~ + / = -; the latest 100 per session are kept)',
        ),
      }),
      body: { required: true, content: { 'application/json': { schema: UserEventSchema } } },
    },
    responses: {
      200: jsonContent('Accepted: the SendResult with the new view', SendResultSchema),
      202: {
        description: 'Asked for `respond-async` (or `wait=false`): the session took the event and runs on',
        content: { 'application/json': { schema: AcceptedResponse } },
        headers: { 'Preference-Applied': { description: '`respond-async`', schema: { type: 'string' } } },
      },
      400: {
        description:
          'Not a user event (invalid_request: { error }, the issues say which field), or refused as an invalid event, e.g. `by` is a reserved name (invalid_event: the SendResult with the structured error, state unchanged)',
        content: { 'application/json': { schema: SendBadRequest } },
      },
      403: {
        description:
          "by_not_allowed: the event names another `by` than its token's name, and the token may not act for others; " +
          "decide_not_allowed: the caller may see the session but not decide it (an app's own access rule); nothing was sent " +
          "(the error body); not_a_decider: the open wait names the groups who decide it (a worker's `approvers` or `reviewers`, an " +
          "escalation's group) and the caller's token is in none of them nor in `admin`: the SendResult, state unchanged",
        content: { 'application/json': { schema: SendForbidden } },
      },
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
      409: {
        description:
          'Refused by the session in its state (event_refused; wait_closed: the event names a wait that is no longer open, ' +
          '`error.wait` and `error.openWait` say which), or another writer saved first (conflict), or it runs ' +
          'elsewhere (session_running_elsewhere, lease_lost: send again after the `Retry-After` header, in seconds, or once ' +
          'its stream says it waits): the SendResult with the structured error, state unchanged',
        content: { 'application/json': { schema: SendResultSchema } },
      },
      422: {
        description: 'idempotency_key_reused: the Idempotency-Key was sent before with another event of this session; nothing was sent',
        content: { 'application/json': { schema: SendResultSchema } },
      },
      429: {
        description:
          'server_busy: this server runs as many sessions as `--max-running` allows; retry after the `Retry-After` header (seconds), or send to another server',
        content: { 'application/json': { schema: ErrorBody } },
      },
      503: {
        description:
          'The server is shutting down: server_stopping (nothing was taken: send it to another server, or here after `Retry-After`), ' +
          'or session_stopped (the event was taken and saved; the session resumes elsewhere)',
        content: { 'application/json': { schema: SendResultSchema } },
      },
    },
  }),
  ({ host, log, access }: ServeDeps) =>
    async (c) => {
      const { id } = c.req.valid('param');
      // An event decides (an answer to a wait, a tool call's approval): the caller must be one who may.
      await access.require(c.get('caller'), id, 'decide');
      if (host.isFull(id)) {
        throw new HttpError(
          429,
          'server_busy',
          `This server runs ${host.maxRunning} sessions at once, its limit: retry in a second, or send to another server of the store (steward serve --max-running sets the limit).`,
        );
      }
      const headers = c.req.valid('header');
      // `Prefer: respond-async` (RFC 7240; among other preferences too) or `?wait=false`: answer once the event is taken.
      const async =
        c.req.valid('query').wait === 'false' || (headers.Prefer ?? '').split(',').some((p) => p.split(';')[0]!.trim().toLowerCase() === 'respond-async');
      const event = c.req.valid('json');
      if (event.via !== undefined)
        throw new HttpError(400, 'invalid_request', 'Invalid event: via: the server sets `via` (the token that sent an event for someone else): leave it out.');
      if (event.through !== undefined)
        throw new HttpError(
          400,
          'invalid_request',
          'Invalid event: through: the server sets `through` (the surface an event came by: "rest" here): leave it out.',
        );
      if (event.groups !== undefined)
        throw new HttpError(
          400,
          'invalid_request',
          "Invalid event: groups: the server sets `groups` (the groups your token puts you in, which a wait's deciders are checked against): leave it out.",
        );
      // `attribute` holds the claimed `by` to the caller's token.
      const who = attribute(c.get('caller'), event.by);
      if (!who.ok) throw new HttpError(403, who.code, who.message);
      const { by: _claimed, ...rest } = event;
      const idempotencyKey = headers['Idempotency-Key'];
      const options = idempotencyKey !== undefined ? { idempotencyKey } : {};
      const attributed = { ...rest, ...attributedAs(who, 'rest') };
      const result = async ? await host.sendAsync(id, attributed, options) : await host.send(id, attributed, undefined, options);
      if ('accepted' in result) {
        c.header('Preference-Applied', 'respond-async');
        return c.json(AcceptedResponse.parse(result), 202);
      }
      if (result.ok) return c.json(result, 200);
      setRetryAfter(c, result.error.code);
      // The refusal's own status (400, 409, 422 and 503 as declared; a fault of the server 500): one SendResult shape for all.
      const status = statusOf(result.error.code) as 409;
      return c.json(SendResultSchema.parse(clientResult(result, (message) => log(`serve: ${message}`))), status);
    },
  refuseInvalid('event'),
);
