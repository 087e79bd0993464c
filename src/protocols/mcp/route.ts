/**
 * `/mcp` on `steward serve`: Steward's MCP server over Streamable HTTP, behind serve's Host /
 * Origin guards, bearer token and body limit like every route. A request of the 2026-07-28
 * protocol is served on its own (the SDK's `createMcpHandler`, a server made for the request's
 * caller): nothing is kept between requests, so a call whose person answered on one server
 * goes on on any other (its request state is enough). A host on the 2025 protocol needs a
 * connection the server can ask its forms on: it gets an MCP session (`Mcp-Session-Id`) on
 * this server, bound to the caller who opened it, ended by DELETE, by shutdown, after a day
 * unused, or when it is the least recently used of its caller's beyond
 * `MAX_LEGACY_SESSIONS_PER_CALLER` (of all beyond `MAX_LEGACY_SESSIONS`): one caller cannot end
 * another's.
 */
import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { Context } from 'hono';
import * as z from 'zod';
import { attribute, attributedAs, type Caller } from '../../http/auth.js';
import { HttpError } from '../../http/errors.js';
import { defineRoute, jsonContent } from '../../http/route.js';
import type { AccessAction } from '../../http/access.js';
import type { StoredSession } from '../../store/session-store.js';
import { admitCreate } from '../../serve/create-limit.js';
import { BEARER, ownerOf, type ServeDeps, type ServeRoute } from '../../serve/route.js';
import { ErrorBody } from '../../serve/schemas.js';
import { stewardVersion } from '../../package-root.js';
import { mcpServerParts, stewardMcpServer, type McpServerParts } from './server.js';
import type { McpCaller, McpTeamDeps } from './team-calls.js';
import type { RequestStates } from './request-state.js';

/** MCP sessions of hosts on the 2025 protocol one server keeps, at most; and for one caller (a host opens one per connection). */
const MAX_LEGACY_SESSIONS = 1000;
const MAX_LEGACY_SESSIONS_PER_CALLER = 16;
/**
 * An MCP session unused this long is ended when the next one opens (a host that went away never
 * says so): longer than the day a person has for one form, while a call waits for their answer.
 */
const LEGACY_IDLE_MS = 25 * 3600_000;
const SESSION_HEADER = 'mcp-session-id';

/** The caller as the tools see it: the name a request state is bound to, and what its events record. */
function mcpCaller(caller: Caller | undefined): McpCaller {
  return { ...(caller ? { name: caller.name } : {}), who: attributedAs(attribute(caller, undefined), 'mcp') };
}

/** What the tools work with, for one caller. */
function teamDeps(deps: ServeDeps, states: RequestStates, caller: Caller | undefined): McpTeamDeps {
  return {
    runtime: deps.runtime,
    store: deps.store,
    host: deps.host,
    states,
    list: (page) => deps.access.list(caller, page),
    admitCreate: () => admitCreate(deps.createLimit, caller),
    access: (id: string, action: AccessAction, stored?: StoredSession) => deps.access.require(caller, id, action, stored),
    owner: ownerOf(caller),
    log: (message) => deps.log(`serve: ${message}`),
  };
}

interface LegacySession {
  transport: WebStandardStreamableHTTPServerTransport;
  /** The caller who opened it: nobody else's requests reach it. */
  callerName: string | undefined;
  /** When a request last used it (ms). */
  usedAt: number;
}

/**
 * Serves /mcp for one app: the 2026-07-28 requests through one handler, the 2025 hosts through their sessions.
 *
 * @example
 * deps.mcp = new McpEndpoint(deps, RequestStates.forTokens(tokens));
 */
export class McpEndpoint {
  private readonly modern: McpHttpHandler;
  private readonly legacy = new Map<string, LegacySession>();
  private readonly parts: McpServerParts;

  constructor(
    private readonly deps: ServeDeps,
    private readonly states: RequestStates,
  ) {
    this.parts = mcpServerParts([...deps.runtime.packages.values()], deps.runtime.limits.userTextChars, stewardVersion());
    this.modern = createMcpHandler((ctx) => this.serverFor((ctx.authInfo?.extra?.caller as Caller | undefined) ?? undefined, ctx.requestInfo?.signal), {
      legacy: 'reject',
      onerror: (error) => deps.log(`serve: an MCP request failed: ${error.message}`),
    });
    deps.streams.add({ close: () => this.closeAll() });
  }

  async handle(c: Context, parsedBody?: unknown): Promise<Response> {
    const caller = c.get('caller') as Caller | undefined;
    const request = c.req.raw;
    const sessionId = request.headers.get(SESSION_HEADER);
    if (sessionId !== null || (await isLegacyRequest(request, parsedBody))) return this.legacyRequest(request, parsedBody, caller, sessionId);
    return this.modern.fetch(request, { authInfo: authOf(caller), ...(parsedBody !== undefined ? { parsedBody } : {}) });
  }

  private serverFor(caller: Caller | undefined, signal?: AbortSignal) {
    return stewardMcpServer(this.parts, teamDeps(this.deps, this.states, caller), mcpCaller(caller), signal);
  }

  /** A 2025-protocol request: to the session it names (its caller's only), or one that opens a new session. */
  private async legacyRequest(request: Request, parsedBody: unknown, caller: Caller | undefined, sessionId: string | null): Promise<Response> {
    let session = sessionId === null ? undefined : this.legacy.get(sessionId);
    if (sessionId !== null && (!session || session.callerName !== caller?.name))
      throw new HttpError(404, 'not_found', 'No such MCP session on this server (it ended, or another server holds it): initialize a new one.');
    if (!session) {
      if (request.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'Open an MCP session with an initialize request (POST) first.');
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.endStale(opened.callerName);
          this.legacy.set(id, opened);
        },
        onsessionclosed: (id) => void this.legacy.delete(id),
      });
      const opened: LegacySession = { transport, callerName: caller?.name, usedAt: Date.now() };
      session = opened;
      await this.serverFor(caller).connect(transport);
    } else if (sessionId !== null) {
      // Most recently used last: the first of a caller's is the one to end when they have too many.
      session.usedAt = Date.now();
      this.legacy.delete(sessionId);
      this.legacy.set(sessionId, session);
    }
    return session.transport.handleRequest(request, { authInfo: authOf(caller), ...(parsedBody !== undefined ? { parsedBody } : {}) });
  }

  /** Before a new session of `callerName` opens: the idle ones end, then that caller's least recently used beyond its share, then (a last bound) the least recently used of all. */
  private endStale(callerName: string | undefined): void {
    const idleSince = Date.now() - LEGACY_IDLE_MS;
    for (const [id, s] of this.legacy) if (s.usedAt < idleSince) this.end(id, s);
    const theirs = [...this.legacy].filter(([, s]) => s.callerName === callerName);
    for (const [id, s] of theirs.slice(0, Math.max(0, theirs.length - MAX_LEGACY_SESSIONS_PER_CALLER + 1))) this.end(id, s);
    for (const [id, s] of [...this.legacy].slice(0, Math.max(0, this.legacy.size - MAX_LEGACY_SESSIONS + 1))) this.end(id, s);
  }

  private end(id: string, session: LegacySession): void {
    this.legacy.delete(id);
    void session.transport.close().catch(() => {});
  }

  /** At shutdown, after the sends under way settled: every MCP session, and what 2026-07-28 requests still hold open (a listen stream). */
  private closeAll(): void {
    for (const { transport } of this.legacy.values()) void transport.close().catch(() => {});
    this.legacy.clear();
    void this.modern.close().catch(() => {});
  }
}

/** The caller, handed to the server factory through the SDK's pass-through auth info. */
const authOf = (caller: Caller | undefined) => ({ token: '', clientId: caller?.name ?? 'anonymous', scopes: [], extra: { caller } });

const McpMessage = z.union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') }))]);

const SUMMARY =
  "Steward's MCP server (Streamable HTTP): run_<package> tools run a team on a request, asking its waits as elicitation forms " +
  '(2026-07-28: input_required with a signed request state; 2025 protocol: elicitation/create on the MCP session); continue_session, ' +
  'list_sessions, read_session. Who acted is the caller of the token';

/** The endpoint of the app the routes are mounted in (an app without one serves no MCP). */
function endpointOf(deps: ServeDeps): McpEndpoint {
  if (!deps.mcp) throw new HttpError(404, 'not_found', 'This app serves no MCP.');
  return deps.mcp;
}

const SESSION_RESPONSES = {
  404: jsonContent('An Mcp-Session-Id this server does not hold (for this caller)', ErrorBody),
  405: jsonContent('No Mcp-Session-Id: the 2026-07-28 protocol has no session to listen to or end', ErrorBody),
};

export const mcpPost = defineRoute(
  createRoute({
    method: 'post',
    path: '/mcp',
    summary: SUMMARY,
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: McpMessage } } } },
    responses: {
      200: {
        description: 'A JSON-RPC response, or a text/event-stream of messages ending with it (progress notifications while the team works)',
        content: { 'application/json': { schema: z.looseObject({}) }, 'text/event-stream': { schema: { type: 'string' } } },
      },
      202: { description: 'A notification or response, taken' },
      404: SESSION_RESPONSES[404],
    },
  }),
  (deps: ServeDeps) => (c) => endpointOf(deps).handle(c, c.req.valid('json')),
);

export const mcpListen = defineRoute(
  createRoute({
    method: 'get',
    path: '/mcp',
    summary: 'An MCP session of a host on the 2025 protocol: its stream of server messages (Mcp-Session-Id)',
    security: BEARER,
    responses: { 200: { description: "The MCP session's stream of server messages (text/event-stream)" }, ...SESSION_RESPONSES },
  }),
  (deps: ServeDeps) => (c) => endpointOf(deps).handle(c),
);

export const mcpEnd = defineRoute(
  createRoute({
    method: 'delete',
    path: '/mcp',
    summary: 'Ends an MCP session of a host on the 2025 protocol (Mcp-Session-Id)',
    security: BEARER,
    responses: { 200: { description: 'The MCP session ended' }, ...SESSION_RESPONSES },
  }),
  (deps: ServeDeps) => (c) => endpointOf(deps).handle(c),
);

/** The /mcp routes, as the serve app lists them. */
export const mcpRoutes: readonly ServeRoute[] = [mcpPost, mcpListen, mcpEnd];
