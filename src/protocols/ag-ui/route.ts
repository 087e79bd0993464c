/**
 * The AG-UI 1.0 endpoint of `steward serve`: `POST /ag-ui/{packageId}` takes a
 * `RunAgentInput` (checked with `@ag-ui/core`'s schema) and answers a `text/event-stream`
 * of AG-UI events, one run (src/protocols/ag-ui/run.ts); `GET /ag-ui/{packageId}/capabilities`
 * says what the agent supports. `by` comes from the authenticated caller, never the payload.
 */
import { AgentCapabilitiesSchema, RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventType, type AgentCapabilities, type BaseEvent, type RunAgentInput } from '@ag-ui/core';
import { createRoute } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import * as z from 'zod';
import { attribute, attributedAs } from '../../http/auth.js';
import { clientError, HttpError, type ClientError } from '../../http/errors.js';
import { defineRoute, jsonContent, shownByZod } from '../../http/route.js';
import { sessionIdProblem } from '../../ids.js';
import { admitCreate, checkCreateAllowance, CREATE_LIMIT_RESPONSE } from '../../serve/create-limit.js';
import { TOO_MANY_STREAMS } from '../../http/stream-slots.js';
import { safeLine } from '../../text/safe-text.js';
import type { Runtime } from '../../runtime/runtime.js';
import { BEARER, ownerOf, type ServeDeps, type ServeRoute } from '../../serve/route.js';
import type { AccessAction } from '../../http/access.js';
import type { StoredSession } from '../../store/session-store.js';
import { ErrorBody } from '../../serve/schemas.js';
import { checked } from './events.js';
import { runAgUi } from './run.js';

function packageOf(runtime: Runtime, id: string | undefined) {
  const pkg = id === undefined ? undefined : runtime.packages.get(id);
  if (!pkg)
    throw new HttpError(
      404,
      'not_found',
      `No package "${safeLine(id ?? '')}" here. Post to /ag-ui/<package>, one of: ${[...runtime.packages.keys()].join(', ')}.`,
    );
  return pkg;
}

/** What every package's AG-UI agent supports. */
export function agUiCapabilities(runtime: Runtime, packageId: string): AgentCapabilities {
  const pkg = packageOf(runtime, packageId);
  return AgentCapabilitiesSchema.parse({
    identity: { name: pkg.id, description: pkg.title, type: 'steward' },
    transport: { streaming: true, resumable: true },
    state: { snapshots: true, deltas: true, persistentState: true },
    multiAgent: { supported: true, delegation: true },
    humanInTheLoop: { supported: true, approvals: true, interrupts: true, approveWithEdits: true, feedback: true },
  }) as AgentCapabilities;
}

const PackageParams = z.object({ packageId: z.string().describe('the skill package whose agent answers') });

export const agUiRun = defineRoute(
  createRoute({
    method: 'post',
    path: '/ag-ui/{packageId}',
    summary:
      'AG-UI 1.0: one run of the thread (threadId = session id; a new thread creates the session) until the session waits (RUN_FINISHED with an interrupt) ' +
      "or is done; resume answers the open interrupt. Who acted is the caller of the token; a new thread is theirs, and another caller's thread " +
      'is refused as an unknown session (RUN_ERROR session_not_found) unless they may see it',
    security: BEARER,
    request: {
      params: PackageParams,
      body: { required: true, content: { 'application/json': { schema: shownByZod(RunAgentInputSchema, 'input') } } },
    },
    responses: {
      200: {
        description:
          'A text/event-stream of AG-UI events; a refused input or resume is a RUN_ERROR in it, nothing changed. A run on a new thread past the ' +
          'create limit is a RUN_ERROR rate_limited alone, with the `Retry-After` header (seconds): ' +
          CREATE_LIMIT_RESPONSE.description +
          ". A run past the caller's open streams is a RUN_ERROR alone: " +
          TOO_MANY_STREAMS,
        content: { 'text/event-stream': { schema: { type: 'string' } } },
        headers: { 'Retry-After': CREATE_LIMIT_RESPONSE.headers['Retry-After'] },
      },
      400: jsonContent('Not a RunAgentInput', ErrorBody),
      404: jsonContent('No such package', ErrorBody),
    },
  }),
  ({ runtime, store, host, log, createLimit, streamSlots, access }: ServeDeps) =>
    async (c) => {
      const pkg = packageOf(runtime, c.req.valid('param').packageId);
      const input = c.req.valid('json') as RunAgentInput;
      // Every event of the run is journalled as decided through AG-UI.
      const attribution = attributedAs(attribute(c.get('caller'), undefined), 'ag-ui');
      const failed = (details: string) => log(`serve: an AG-UI run on thread ${input.threadId} failed: ${details}`);
      // A run is one of the caller's open streams; on a new thread it creates its session: the
      // stream limit and the create limit, every route's, have their say first.
      let refusal: ClientError | undefined;
      let release = () => {};
      try {
        release = streamSlots?.take(c.get('caller')) ?? release;
        // Checked here (its Retry-After must precede the stream) and spent by the run only once its first message passes.
        if (sessionIdProblem(input.threadId) === null && !(await store.load(input.threadId))) checkCreateAllowance(createLimit, c.get('caller'));
      } catch (error) {
        release();
        refusal = clientError(error, failed);
        if (refusal.retryAfterSeconds !== undefined) c.header('Retry-After', String(refusal.retryAfterSeconds));
      }
      return streamSSE(c, async (sse) => {
        let writing = Promise.resolve();
        const emit = (event: BaseEvent) => {
          try {
            const data = JSON.stringify(checked(event));
            writing = writing.then(() => sse.writeSSE({ data })).catch(() => {}); // a client gone away: the session still runs to its wait
          } catch (error) {
            // Never on the wire: a malformed event is a bug of ours, and it must not stop the session's listeners.
            log(`serve: an AG-UI ${String(event.type)} event failed its schema (a bug): ${error instanceof Error ? error.message : String(error)}`);
          }
        };
        try {
          // Refused before the run: RUN_ERROR alone, as the protocol allows before RUN_STARTED.
          if (refusal) emit({ type: EventType.RUN_ERROR, code: refusal.code, message: refusal.message } as BaseEvent);
          else {
            const caller = c.get('caller');
            const admit = () => admitCreate(createLimit, caller);
            const deps = {
              runtime,
              store,
              host,
              admitCreate: admit,
              signal: c.req.raw.signal,
              owner: ownerOf(caller),
              access: (id: string, action: AccessAction, stored: StoredSession) => access.require(caller, id, action, stored),
            };
            await runAgUi(deps, pkg.id, input, attribution, emit);
          }
          await writing;
        } finally {
          release();
        }
      });
    },
);

export const agUiCapabilitiesRoute = defineRoute(
  createRoute({
    method: 'get',
    path: '/ag-ui/{packageId}/capabilities',
    summary: "AG-UI capabilities of the package's agent (humanInTheLoop: approvals, interrupts, approve with edits)",
    security: BEARER,
    request: { params: PackageParams },
    responses: {
      200: jsonContent('AgentCapabilities', shownByZod(AgentCapabilitiesSchema, 'output')),
      404: jsonContent('No such package', ErrorBody),
    },
  }),
  ({ runtime }: ServeDeps) =>
    (c) =>
      c.json(agUiCapabilities(runtime, c.req.valid('param').packageId), 200),
);

/** The AG-UI routes, as the serve app lists them. */
export const agUiRoutes: readonly ServeRoute[] = [agUiRun, agUiCapabilitiesRoute];
