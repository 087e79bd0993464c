/**
 * A server's tools as definitions: listed page by page and stopped past `maxTools` (a server
 * listing 10,000 tools would put them all in every prompt), each one's text bounded, its
 * schemas bounded, and a digest over all of it, so a tool that changes is seen to change.
 */
import type { Client, Tool } from '@modelcontextprotocol/client';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/text/canonical-json.js';
import { MCP_TOOL_NAME_PATTERN } from '../core/skills/mcp-servers.js';
import { McpToolLimitError } from './errors.js';
import type { ToolDefinition, ToolHostLimits } from './types.js';

export interface ListedTool {
  definition: ToolDefinition;
  tool: Tool;
}

/** A title is a label: a line at most. */
const TITLE_CHARS = 200;
/** Pages of tools/list before the listing is given up: a cursor that never ends must not loop. */
const MAX_PAGES = 64;

/**
 * Every tool of the connected server: its definition, and the tool as the server listed it
 * (the SDK checks a call's structured result against its output schema).
 *
 * @example
 * const tools = await listServerTools(client, { server: 'files', trusted: true, limits, log: console.log, timeoutMs: 60_000 });
 * tools.map(({ definition }) => `${definition.server}.${definition.name}`);
 */
export async function listServerTools(
  client: Client,
  options: { server: string; trusted: boolean; limits: ToolHostLimits; log: (line: string) => void; timeoutMs: number; signal?: AbortSignal },
): Promise<ListedTool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    // One page per request: the SDK's listTools() reads every page before it returns.
    const result = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      {
        timeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    tools.push(...result.tools);
    if (tools.length > options.limits.maxTools) throw new McpToolLimitError(options.server, 'maxTools', options.limits.maxTools, tools.length);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  const seen = new Set<string>();
  const listed: ListedTool[] = [];
  for (const tool of tools) {
    if (!MCP_TOOL_NAME_PATTERN.test(tool.name) || seen.has(tool.name)) {
      options.log(`MCP server "${options.server}": skipped a tool named ${JSON.stringify(tool.name.slice(0, 200))} (not a valid tool name, or listed twice)`);
      continue;
    }
    seen.add(tool.name);
    listed.push({ definition: toDefinition(tool, options), tool });
  }
  return listed;
}

function toDefinition(tool: Tool, options: { server: string; trusted: boolean; limits: ToolHostLimits }): ToolDefinition {
  const schemaChars = canonicalJson(tool.inputSchema).length + (tool.outputSchema ? canonicalJson(tool.outputSchema).length : 0);
  if (schemaChars > options.limits.schemaChars) throw new McpToolLimitError(options.server, 'schemaChars', options.limits.schemaChars, schemaChars, tool.name);
  const definition: Omit<ToolDefinition, 'digest'> = {
    server: options.server,
    name: tool.name,
    ...(tool.title !== undefined ? { title: cut(tool.title, TITLE_CHARS) } : {}),
    ...(tool.description !== undefined ? { description: cut(tool.description, options.limits.descriptionChars) } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(options.trusted && tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  };
  return { ...definition, digest: createHash('sha256').update(canonicalJson(definition)).digest('hex') };
}

/** `text` at most `max` characters, saying it was cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = ` … (cut: ${text.length - max} more characters)`;
  return text.slice(0, Math.max(0, max - note.length)) + note;
}
