/**
 * Steward's MCP server (`@modelcontextprotocol/server`): the tools an MCP host sees, for one
 * caller. One `run_<package>` tool per package (a host lists them as what it can ask a team to
 * do), `continue_session` to come back to a session, `list_sessions` and `read_session`. The
 * same server serves both protocols: on 2026-07-28 a wait is an `input_required` result the
 * host answers by calling again; on the 2025 protocol the SDK's legacy shim asks the same
 * forms with `elicitation/create` on the open connection (team-calls.ts).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  fromJsonSchema,
  McpServer,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type JsonSchemaType,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import { HttpError } from '../../http/errors.js';
import { StewardError } from '../../core/errors.js';
import { latest } from '../../core/blackboard/blackboard.js';
import { ownRecord, ownRecordJsonSchema } from '../../core/blackboard/keyed.js';
import { TAG_PATTERN, type SkillPackage } from '../../core/skills/package-schema.js';
import { McpCallRefused, McpTeamCalls, SessionOutcome, type McpCaller, type McpTeamDeps, type Progress } from './team-calls.js';
import type { RequestState } from './request-state.js';

/** Rounds of forms one call of a host on the 2025 protocol may go through (each wait is one; a short story has a dozen or so). */
const LEGACY_MAX_ROUNDS = 200;
/** How long such a host's person has for one form: a day (a person, not a program, answers). */
const LEGACY_ROUND_MS = 24 * 3600_000;

/** Tags a call may put on the blackboard, at most. */
const MAX_TAGS = 20;

/** The request and the tags a call starts a session with, each body within the runtime's limit for what a person types. */
function startInput(userTextChars: number) {
  const body = z.string().max(userTextChars, `must be at most ${userTextChars} characters`);
  return z.object({
    request: body.trim().min(1).describe('What the team should do (the request, as you would tell a person)'),
    tags: ownRecord(z.string().max(120).regex(TAG_PATTERN, 'must be a tag name (letters, digits, _ and -, dotted parts)'), body)
      .refine((tags) => Object.keys(tags).length <= MAX_TAGS, `at most ${MAX_TAGS} tags`)
      .optional()
      .describe('Tags to put on the blackboard before the team starts (tag → body), e.g. a brief or a source text'),
  });
}
const SessionId = z.string().min(1).describe('The session id (from list_sessions, or a result of run_<package>)');

/** What a tool's failure is to the host: its text, flagged as an error (the model or the person reads it). */
function failed(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * A tool's input as the SDK shows it (a tag record as its JSON Schema: zod cannot render the Map
 * an `ownRecord` checks with) and checks it; the handler parses the arguments with `schema` itself,
 * which keeps every own key (a tag may be named "__proto__").
 */
function shownInput(schema: z.ZodType) {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', override: ownRecordJsonSchema });
  return fromJsonSchema(json as JsonSchemaType);
}

/**
 * The handler's errors a host should read (a refusal, a bad request, a limit) as the tool's
 * error result; a failure of the server's own is logged, and the host is told only that it failed
 * (its message may name a database, a path, a secret).
 */
async function guarded(
  log: (message: string) => void,
  run: () => Promise<CallToolResult | InputRequiredResult>,
): Promise<CallToolResult | InputRequiredResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof McpCallRefused || error instanceof StewardError) return failed(error.message);
    if (HttpError.isInstance(error) && error.status < 500) return failed(error.message);
    log(`an MCP tool call failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return failed('The server failed on this call; its log has the details. Try again, or come back to the session with continue_session.');
  }
}

/**
 * Sends progress notifications to a host that asked for them (a progress token on the call). A
 * call that asks forms is entered again for each answer under the same token, and progress must
 * only grow: it is the time in milliseconds, kept increasing within a round.
 */
function progressOf(ctx: ServerContext): Progress | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  let last = 0;
  return (message) => {
    last = Math.max(last + 1, Date.now());
    void ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: last, message } }).catch(() => {});
  };
}

/** Whether the host shows forms: it declared elicitation (on 2026-07-28 with each request, on the 2025 protocol when it connected). */
function showsForms(server: McpServer, ctx: ServerContext): boolean {
  const declared = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  return (declared ?? server.server.getClientCapabilities())?.elicitation !== undefined;
}

const NO_FORMS =
  "This host shows no forms (it declared no MCP elicitation), and a team's waits are forms a person answers: nothing was started. " +
  'Use a host that supports elicitation, or run the team with `steward run` or through `steward serve` (its page, AG-UI, A2A).';

/** The request state the SDK checked with `requestState.verify` before the handler ran (none on a first call). */
const stateOf = (ctx: ServerContext): RequestState | undefined => ctx.mcpReq.requestState<RequestState>();

/**
 * What every server of one process shares, made once: the packages, the version, and the
 * run tools' input (its JSON Schema the SDK compiles once per object and keeps: made per
 * request, it would pile up).
 */
export interface McpServerParts {
  packages: readonly SkillPackage[];
  version: string;
  start: { schema: z.ZodType<{ request: string; tags?: Record<string, string> | undefined }>; shown: ReturnType<typeof shownInput> };
}

/**
 * @example
 * const parts = mcpServerParts([...runtime.packages.values()], runtime.limits.userTextChars, stewardVersion());
 */
export function mcpServerParts(packages: readonly SkillPackage[], userTextChars: number, version: string): McpServerParts {
  const schema = startInput(userTextChars);
  return { packages, version, start: { schema, shown: shownInput(schema) } };
}

/**
 * The MCP server one caller talks to.
 *
 * @example
 * const server = stewardMcpServer(parts, deps, { name: 'ana', who: { by: 'ana', through: 'mcp' } });
 * serveStdio(() => server);
 */
export function stewardMcpServer(parts: McpServerParts, deps: McpTeamDeps, caller: McpCaller, signal?: AbortSignal): McpServer {
  const { packages, version, start } = parts;
  const server = new McpServer(
    { name: 'steward', title: 'Steward', version },
    {
      instructions:
        'Each run_<package> tool hands a request to a team of agents. A person approves its steps and accepts its artifacts: ' +
        'the tool asks with forms (elicitation). Declining a form leaves the session waiting; continue_session comes back to it.',
      inputRequired: { maxRounds: LEGACY_MAX_ROUNDS, roundTimeoutMs: LEGACY_ROUND_MS },
      requestState: {
        // Refused states answer -32602 ("Invalid or expired requestState") before the handler runs.
        verify: (state: string) => deps.states.verify(state, caller.name),
      },
    },
  );
  const calls = new McpTeamCalls(deps, caller, signal);
  for (const pkg of packages) {
    server.registerTool(
      `run_${pkg.id}`,
      {
        title: pkg.title,
        description:
          `${pkg.description} Runs a team (${pkg.workers.map((w) => w.id).join(', ')}) on your request; ` +
          'it asks you to approve its steps and accept its artifacts, and answers with the accepted artifacts.',
        inputSchema: start.shown,
        outputSchema: SessionOutcome,
      },
      (args, ctx) =>
        guarded(deps.log, () => {
          const state = stateOf(ctx);
          if (state) return calls.answer(state, ctx.mcpReq.inputResponses, progressOf(ctx), pkg.id);
          if (!showsForms(server, ctx)) throw new McpCallRefused(NO_FORMS);
          const parsed = start.schema.safeParse(args);
          if (!parsed.success) throw new McpCallRefused(`The arguments are not a request: ${z.prettifyError(parsed.error)}`);
          return calls.start(pkg.id, parsed.data.request, parsed.data.tags, progressOf(ctx));
        }),
    );
  }
  server.registerTool(
    'continue_session',
    {
      title: 'Continue a session',
      description: "Comes back to a session: asks its open wait's forms, follows it while it runs, or gives its artifacts once done.",
      inputSchema: z.object({ sessionId: SessionId }),
      outputSchema: SessionOutcome,
    },
    (args, ctx) =>
      guarded(deps.log, () => {
        const state = stateOf(ctx);
        if (state && state.sessionId !== args.sessionId) throw new McpCallRefused('The request state is for another session: call again without it.');
        return state ? calls.answer(state, ctx.mcpReq.inputResponses, progressOf(ctx)) : calls.continue(args.sessionId);
      }),
  );
  server.registerTool(
    'list_sessions',
    {
      title: 'List sessions',
      description: 'Your sessions, newest first, 50 at a time (pass `next` as `after` for more).',
      inputSchema: z.object({ after: z.string().optional().describe('The `next` of the previous page') }),
      annotations: { readOnlyHint: true },
    },
    (args) => guarded(deps.log, () => calls.list(args.after ?? null)),
  );
  server.registerTool(
    'read_session',
    {
      title: 'Read a session',
      description: 'A session as it stands: its phase, its wait, and the bodies on its blackboard.',
      inputSchema: z.object({ sessionId: SessionId }),
      annotations: { readOnlyHint: true },
    },
    (args) =>
      guarded(deps.log, async () => {
        const { view, context } = await calls.read(args.sessionId);
        const board = view.blackboard.map((t) => ({ ...t, body: latest(context.blackboard, t.tag)?.body ?? '' }));
        const lines = [
          `Session ${view.id}: ${view.state}${view.waitingReason ? ` (waits: ${view.waitingReason}, wait ${view.wait})` : ''}`,
          ...board.map((t) => `[${t.tag} v${t.version} by ${t.writtenBy}]\n${t.body}`),
        ];
        return { content: [{ type: 'text', text: lines.join('\n\n') }], structuredContent: { view: { ...view }, blackboard: board } };
      }),
  );
  return server;
}
