/**
 * The A2A endpoint of `steward serve`: each package is an agent, its card at
 * `GET /a2a/{packageId}/.well-known/agent-card.json` and its JSON-RPC binding at
 * `POST /a2a/{packageId}`, through `@a2a-js/sdk`'s framework-free `JsonRpcTransportHandler`
 * (A2A 1.0 methods, `A2A-Version: 1.0`) and its `LegacyJsonRpcTransportHandler` (the 0.3
 * method names `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
 * `tasks/resubscribe`, for a request without that header or with `0.3`). Streaming answers are
 * `text/event-stream`, one `data:` JSON-RPC response per event. Auth is the app's bearer
 * token like every route; `by` comes from the caller of the token, never the payload.
 */
import { AgentCard, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import * as z from 'zod';
import { attribute, attributedAs } from '../../http/auth.js';
import { HttpError } from '../../http/errors.js';
import { defineRoute, jsonContent, type ValidationResult } from '../../http/route.js';
import { safeLine } from '../../text/safe-text.js';
import type { Runtime } from '../../runtime/runtime.js';
import { BEARER, ownerOf, PUBLIC, type ServeDeps, type ServeRoute } from '../../serve/route.js';
import type { AccessAction } from '../../http/access.js';
import type { StoredSession } from '../../store/session-store.js';
import { ErrorBody } from '../../serve/schemas.js';
import type { SkillPackage } from '../../core/skills/package-schema.js';
import { A2A_ERROR_CODE, A2AError, JsonRpcRequestMalformedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { StewardA2AHandler } from './handler.js';
import { admitCreate, CREATE_LIMIT_RESPONSE } from '../../serve/create-limit.js';
import { TOO_MANY_STREAMS } from '../../http/stream-slots.js';
import { a2aClientError, ClientSafeHandler } from './client-errors.js';

/** The A2A protocol versions the JSON-RPC binding speaks (1.0 natively, 0.3 through the SDK's compat layer). */
const VERSIONS = ['1.0', '0.3'] as const;
const MODES = ['text/plain', 'application/json'];
/** The methods answered with a stream (1.0 and 0.3 names): each holds one of the caller's open streams. */
const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

function packageOf(runtime: Runtime, id: string | undefined): SkillPackage {
  const pkg = id === undefined ? undefined : runtime.packages.get(id);
  if (!pkg)
    throw new HttpError(
      404,
      'not_found',
      `No package "${safeLine(id ?? '')}" here. The A2A agents are /a2a/<package>, one of: ${[...runtime.packages.keys()].join(', ')}.`,
    );
  return pkg;
}

/**
 * The agent card of a package: one skill per worker, streaming, bearer auth when the server has
 * tokens; its version is the hash of the package's version on disk (what new sessions are pinned to).
 *
 * @example
 * const card = agentCard(pkg, 'http://127.0.0.1:8080', true, runtime.packageVersionOnDisk(pkg.id)!); // card.supportedInterfaces[0].url === 'http://127.0.0.1:8080/a2a/short-story'
 */
export function agentCard(pkg: SkillPackage, origin: string, auth: boolean, version: string): AgentCard {
  return AgentCard.fromJSON({
    name: pkg.title,
    description: pkg.description,
    supportedInterfaces: VERSIONS.map((protocolVersion) => ({
      url: `${origin}/a2a/${encodeURIComponent(pkg.id)}`,
      protocolBinding: 'JSONRPC',
      protocolVersion,
    })),
    provider: { organization: 'Steward', url: origin },
    version,
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    ...(auth
      ? {
          securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: "The server's token (steward serve --token / --tokens)" } } },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
        }
      : {}),
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: pkg.workers.map((w) => ({
      id: w.id,
      name: w.title,
      description: w.description,
      tags: [...new Set([pkg.id, ...w.outputTags])],
      examples: [],
      inputModes: MODES,
      outputModes: MODES,
    })),
  });
}

const PackageParams = z.object({ packageId: z.string().describe('the skill package whose agent answers') });

/** A JSON-RPC 2.0 request, as the SDK's transport checks it before it reads the method. */
const JsonRpcRequest = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  id: z.union([z.string(), z.int(), z.null()]).optional(),
  params: z.unknown().optional(),
});

/** The protocol's version a request asks for (A2A-Version; none: 0.3) and how its errors are written. */
function protocolOf(c: Context) {
  const version = c.req.header(A2A_VERSION_HEADER) ?? '0.3';
  const v03 = version === '0.3';
  return { version, v03, mapError: v03 ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError };
}

/** A body that is no JSON-RPC request is answered in the protocol, as the SDK's transport answers one: Invalid Request. */
function notJsonRpc(result: ValidationResult, c: Context): Response | void {
  if (result.success) return;
  // The validator hands its hook the value it checked, a failed one too.
  const sent = ((result as { data?: unknown }).data ?? {}) as { id?: unknown };
  const id = typeof sent.id === 'string' || (typeof sent.id === 'number' && Number.isInteger(sent.id)) ? sent.id : null;
  const { v03, mapError } = protocolOf(c);
  const message = 'Invalid JSON-RPC Request.';
  // Each version's own error, as its transport writes it (0.3: Invalid Request; 1.0: RequestMalformedError).
  const malformed = v03 ? new JsonRpcRequestMalformedError({ message, envelopeCode: A2A_ERROR_CODE.INVALID_REQUEST }) : new RequestMalformedError(message);
  return c.json({ jsonrpc: '2.0', id, error: mapError(malformed) });
}

export const a2aAgentCard = defineRoute(
  createRoute({
    method: 'get',
    path: '/a2a/{packageId}/.well-known/agent-card.json',
    summary:
      "A2A agent card of the package's agent (skills: its workers; JSON-RPC 1.0 and 0.3; streaming). Public, as discovery documents are; " +
      'its URLs are the configured public URL (--public-url), else the listening address',
    security: PUBLIC,
    request: { params: PackageParams },
    responses: {
      200: { description: 'AgentCard (A2A 1.0 JSON)' },
      404: jsonContent('No such package, or (an embedding app without publicUrl) no public URL to name in the card', ErrorBody),
    },
  }),
  ({ runtime, auth, publicUrl }: ServeDeps) =>
    (c) => {
      const pkg = packageOf(runtime, c.req.valid('param').packageId);
      const base = publicUrl?.();
      if (base === undefined)
        throw new HttpError(
          404,
          'not_found',
          'This app serves no A2A agent card: a card names the URL its agent is reached at, and this app was given none. ' +
            'Set createServeApp({ publicUrl }) to the URL these routes are mounted at, e.g. https://example.com/steward.',
        );
      return c.json(AgentCard.toJSON(agentCard(pkg, base, auth, runtime.packageVersionOnDisk(pkg.id) ?? '')) as Record<string, unknown>);
    },
);

export const a2aJsonRpc = defineRoute(
  createRoute({
    method: 'post',
    path: '/a2a/{packageId}',
    summary:
      'A2A JSON-RPC: a message starts a session (contextId = task id = session id) or answers its wait (input-required); ' +
      'SendStreamingMessage / SubscribeToTask (message/stream, tasks/resubscribe) follow it live. Who acted is the caller of the token; ' +
      "a new context is theirs, and another caller's task is answered as an unknown one (TaskNotFoundError) unless they may see it",
    security: BEARER,
    request: { params: PackageParams, body: { required: true, content: { 'application/json': { schema: JsonRpcRequest } } } },
    responses: {
      200: {
        description:
          'A JSON-RPC response (an error one too: a body that is no JSON-RPC request is an Invalid Request), or for the streaming methods a text/event-stream of them',
        content: { 'application/json': { schema: z.looseObject({ jsonrpc: z.literal('2.0') }) }, 'text/event-stream': { schema: { type: 'string' } } },
      },
      404: jsonContent('No such package', ErrorBody),
      429: {
        description:
          `A JSON-RPC error (UnsupportedOperationError, metadata.code rate_limited) for a message to a new context: ${CREATE_LIMIT_RESPONSE.description}; ` +
          `or (metadata.code too_many_streams) for a streaming method: ${TOO_MANY_STREAMS}`,
        content: { 'application/json': { schema: z.looseObject({ jsonrpc: z.literal('2.0') }) } },
        headers: CREATE_LIMIT_RESPONSE.headers,
      },
    },
  }),
  ({ runtime, store, host, auth, log, streams, createLimit, publicUrl, streamSlots, access }: ServeDeps) =>
    async (c) => {
      const pkg = packageOf(runtime, c.req.valid('param').packageId);
      const body = c.req.valid('json');
      // Every event of the task is journalled as decided through A2A.
      const attribution = attributedAs(attribute(c.get('caller'), undefined), 'a2a');
      // The card this request is answered with (its versions, its capabilities): its URLs are the public URL's, never the request's Host.
      const card = agentCard(pkg, publicUrl?.() ?? '', auth, runtime.packageVersionOnDisk(pkg.id) ?? '');
      // Ends a stream when its client leaves or the server shuts down (serve closes every registered stream).
      const ending = new AbortController();
      const handler = new ClientSafeHandler(
        new StewardA2AHandler(
          {
            runtime,
            store,
            host,
            admitCreate: () => admitCreate(createLimit, c.get('caller')),
            owner: ownerOf(c.get('caller')),
            access: (id: string, action: AccessAction, stored?: StoredSession) => access.require(c.get('caller'), id, action, stored),
          },
          pkg.id,
          card,
          attribution,
          ending.signal,
        ),
        (details) => log(`serve: an A2A request to ${pkg.id} failed: ${details}`),
      );
      // A refusal to come back to (a limit, a server stopping) keeps its HTTP status and Retry-After: the SDK's client reads the JSON-RPC error either way.
      const answered = (json: unknown) => {
        const failure = handler.failure;
        if (failure?.retryAfterSeconds === undefined) return c.json(json);
        c.header('Retry-After', String(failure.retryAfterSeconds));
        return c.json(json, failure.status);
      };
      const { version, v03, mapError } = protocolOf(c);
      const context = new ServerCallContext({ requestedVersion: version });
      const id = body.id ?? null;
      try {
        validateVersion(version, card, 'JSONRPC');
      } catch (error) {
        return c.json({ jsonrpc: '2.0', id, error: mapError(error) });
      }
      const failed = (details: string) => log(`serve: an A2A stream to ${pkg.id} failed: ${details}`);
      // A streaming method holds one of the caller's open streams until it ends; past the limit, a JSON-RPC error answered 429.
      let release = () => {};
      if (STREAMING_METHODS.has(body.method)) {
        try {
          release = streamSlots?.take(c.get('caller')) ?? release;
        } catch (error) {
          const { error: refusal, safe } = a2aClientError(error, failed);
          return c.json({ jsonrpc: '2.0', id, error: mapError(refusal) }, safe?.status ?? 429);
        }
      }
      let streaming = false;
      try {
        const answer = v03
          ? await new LegacyJsonRpcTransportHandler(handler).handle(body, context)
          : await new JsonRpcTransportHandler(handler).handle(body, context);
        if (!(Symbol.asyncIterator in answer)) return answered(answer);
        const events = answer[Symbol.asyncIterator]();
        const rpcError = (error: unknown) => ({
          jsonrpc: '2.0',
          id,
          // The handler's own failures are A2A errors already (ClientSafeHandler); anything else (the wire) is mapped here.
          error: mapError(error instanceof A2AError ? error : a2aClientError(error, failed).error),
        });
        // The first event decides: a refusal before it (a bad answer, say) is a plain JSON-RPC error, nothing sent.
        let first: IteratorResult<unknown>;
        try {
          first = await events.next();
        } catch (error) {
          return answered(rpcError(error));
        }
        streaming = true;
        return streamSSE(c, async (sse) => {
          const handle = { close: () => ending.abort() };
          streams.add(handle);
          sse.onAbort(handle.close);
          try {
            if (!first.done) await sse.writeSSE({ data: JSON.stringify(first.value) });
            for (let next = await events.next(); !next.done; next = await events.next()) await sse.writeSSE({ data: JSON.stringify(next.value) });
          } catch (error) {
            // A refusal found once streaming (a guard, another server running it): the spec's error event, then the end.
            await sse.writeSSE({ event: 'error', data: JSON.stringify(rpcError(error)) }).catch(() => {});
          } finally {
            streams.delete(handle);
            release();
          }
        });
      } finally {
        if (!streaming) release();
      }
    },
  notJsonRpc,
);

/** The A2A routes, as the serve app lists them. */
export const a2aRoutes: readonly ServeRoute[] = [a2aAgentCard, a2aJsonRpc];
