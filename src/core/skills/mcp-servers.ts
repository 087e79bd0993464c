/**
 * The `mcpServers` of a package's manifest: the MCP servers whose tools its workers may use,
 * in the shape MCP hosts already use, so a server's entry can be copied from its README:
 *
 * ```json
 * "mcpServers": {
 *   "files": { "command": "node", "args": ["server.js"], "env": { "ROOT": "${DOCS_ROOT}" } },
 *   "github": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" } }
 * }
 * ```
 *
 * A server with `command` is local (started over stdio), one with `url` is remote (Streamable
 * HTTP). Steward's own fields sit beside them: `approval` (the server's default: does a call
 * wait for a person), `tools` (per-tool overrides), `trusted` (whether its tools' annotations,
 * such as `readOnlyHint`, are believed) and `timeoutMs` (one call's limit). `${VAR}` in
 * `args`, `env`, `cwd`, `url` and `headers` is kept as written here: it is expanded from the
 * environment when the server starts (src/mcp), so no secret is ever part of a package.
 *
 * Error messages follow package-schema.ts: phrased to follow a field name.
 */
import * as z from 'zod';
import { isPlainRecord, ownRecord, ownValue } from '../blackboard/keyed.js';
import { strict } from './strict-object.js';

/** Server names: tool references are `server.tool`, so no dot; plain like package ids. */
export const MCP_SERVER_NAME_PATTERN = /^[a-z][a-z0-9_-]*$/;

/** Tool names as MCP defines them (1–128 of A–Z, a–z, 0–9, `_`, `-`, `.`). */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** Environment variable names as POSIX shells take them. */
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** HTTP header names (RFC 9110 tokens). */
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The longest call limit a manifest may set: one hour. */
const MAX_TIMEOUT_MS = 3_600_000;

const SERVER_NAME_HINT = 'a server name like "github" (lowercase letters, digits, "-" or "_", starting with a letter; no dot: tools are named "server.tool")';

const text = (what: string) => z.string({ error: `must be ${what}` }).min(1, { error: `must be ${what}, not empty` });

/** Whether a call of the server's tools waits for a person's approval. */
export const McpApprovalSchema = z.enum(['always', 'never'], {
  error: 'must be "always" (a person approves every call) or "never" (calls run without waiting)',
});
export type McpApproval = z.infer<typeof McpApprovalSchema>;

const McpToolSettingsSchema = strict({ approval: McpApprovalSchema.optional() }, 'an object like { "approval": "always" }');
export type McpToolSettings = z.infer<typeof McpToolSettingsSchema>;

/** What every server may set, local or remote. */
const common = {
  /** The default for every tool of the server; unset, the runtime's rules decide (e.g. from annotations). */
  approval: McpApprovalSchema.optional(),
  /** Per tool, by the server's name for it. */
  tools: ownRecord(
    z.string().regex(MCP_TOOL_NAME_PATTERN, { error: 'must be a tool name as the server lists it (letters, digits, "_", "-" or ".")' }),
    McpToolSettingsSchema,
    { error: 'must be an object of tool names to settings, e.g. { "delete_file": { "approval": "always" } }' },
  ).optional(),
  /** false: the server's tool annotations (readOnlyHint, destructiveHint, …) are not believed. */
  trusted: z.boolean({ error: 'must be true (believe the annotations of its tools, the default) or false' }).default(true),
  /** One call's limit in milliseconds (the host's default is 60 s). */
  timeoutMs: z
    .number({ error: 'must be a number of milliseconds, e.g. 120000' })
    .int({ error: 'must be a whole number of milliseconds' })
    .positive({ error: 'must be a positive number of milliseconds' })
    .max(MAX_TIMEOUT_MS, { error: `must be at most ${MAX_TIMEOUT_MS} (one hour)` })
    .optional(),
};

const StdioServerSchema = strict(
  {
    command: text('the program that starts the server, e.g. "node" or "npx"'),
    args: z.array(z.string({ error: 'must be a string' }), { error: 'must be an array of strings, e.g. ["server.js"]' }).optional(),
    env: ownRecord(
      z.string().regex(ENV_NAME_PATTERN, { error: 'must be an environment variable name like "API_TOKEN"' }),
      z.string({ error: 'must be a string (write "${VAR}" to pass a variable of the environment Steward runs in)' }),
      { error: 'must be an object of variable names to strings, e.g. { "API_TOKEN": "${API_TOKEN}" }' },
    ).optional(),
    cwd: text('the folder the server starts in').optional(),
    ...common,
  },
  'a local server { command, args?, env?, cwd? }',
);

const HttpServerSchema = strict(
  {
    url: text('the server\'s Streamable HTTP endpoint, e.g. "https://example.com/mcp"').refine((url) => /^https?:\/\/[^\s]+$/i.test(url), {
      error: 'must be an http:// or https:// URL, e.g. "https://example.com/mcp"',
    }),
    headers: ownRecord(
      z.string().regex(HEADER_NAME_PATTERN, { error: 'must be an HTTP header name like "Authorization"' }),
      z.string({ error: 'must be a string (write "${VAR}" to pass a variable of the environment Steward runs in)' }),
      { error: 'must be an object of header names to strings, e.g. { "Authorization": "Bearer ${TOKEN}" }' },
    ).optional(),
    ...common,
  },
  'a remote server { url, headers? }',
);

export type McpStdioServerConfig = z.output<typeof StdioServerSchema>;
export type McpHttpServerConfig = z.output<typeof HttpServerSchema>;
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/**
 * One server: local when it has `command`, remote when it has `url`. Checked against the one
 * shape it claims, so an error names that shape's fields, not a union's.
 */
export const McpServerConfigSchema = z
  .custom<Record<string, unknown>>(isPlainRecord, {
    error: 'must be a local server { command, args?, env?, cwd? } or a remote one { url, headers? }',
  })
  .transform((value, ctx): McpServerConfig => {
    const local = Object.hasOwn(value, 'command');
    const remote = Object.hasOwn(value, 'url');
    if (local === remote) {
      ctx.addIssue({
        code: 'custom',
        message: local
          ? 'has both "command" and "url": a server is either local (command) or remote (url)'
          : 'must have "command" (a local server, e.g. { "command": "node", "args": ["server.js"] }) or "url" (a remote one)',
      });
      return z.NEVER;
    }
    const parsed = (local ? StdioServerSchema : HttpServerSchema).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });

/** A manifest's `mcpServers`: server names to servers. */
export const McpServersSchema = ownRecord(z.string().regex(MCP_SERVER_NAME_PATTERN, { error: `must be ${SERVER_NAME_HINT}` }), McpServerConfigSchema, {
  error: 'must be an object of server names to servers, e.g. { "files": { "command": "node", "args": ["server.js"] } }',
});
export type McpServers = z.output<typeof McpServersSchema>;

/**
 * Whether a server is local (started as a child process over stdio).
 *
 * @example
 * if (isStdioServer(config)) console.log(`starts ${config.command}`);
 */
export function isStdioServer(config: McpServerConfig): config is McpStdioServerConfig {
  return 'command' in config;
}

/**
 * A manifest's servers as a list of `{ name, config }`, in the manifest's order: what the
 * tool host is given, one server at a time.
 *
 * @example
 * for (const server of serverList(manifest.mcpServers ?? {})) await host.listTools(server);
 */
export function serverList(servers: McpServers): { name: string; config: McpServerConfig }[] {
  return Object.entries(servers).map(([name, config]) => ({ name, config }));
}

/**
 * What the manifest says about approving a call of `tool`: its own setting, else the server's;
 * undefined when neither says (the runtime's rules decide).
 *
 * @example
 * approvalOf({ command: 'node', approval: 'never', tools: { rm: { approval: 'always' } }, trusted: true }, 'rm'); // 'always'
 */
export function approvalOf(config: McpServerConfig, tool: string): McpApproval | undefined {
  const settings: McpToolSettings | undefined = config.tools ? ownValue(config.tools, tool) : undefined;
  return settings?.approval ?? config.approval;
}
