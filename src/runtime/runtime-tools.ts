/**
 * A runtime's MCP tools: one tool host, shared by its sessions, made (and the MCP SDK loaded)
 * only when a worker first needs a tool, and closed with the runtime (its local servers are
 * child processes). The worker turns' toolbox, the `toolCall` actor and the check of a
 * person's edited arguments all read it.
 */
import { createRequire } from 'node:module';
import type { WorkerToolbox } from '../core/agents/worker-toolbox.js';
import type { SessionContext } from '../core/machines/session.context.js';
import type { UserEvent } from '../core/machines/session.events.js';
import type { SkillPackage } from '../core/skills/package-schema.js';
import { pinnedTool } from '../core/tools/server-tools.js';
import type { ToolHost } from '../mcp/tool-host.js';
import type { ToolHostOptions } from '../mcp/types.js';
import type { createSchemaChecker } from '../mcp/validate-arguments.js';
import { answerProblem } from './tool-input.js';
import { createWorkerToolbox, definitionOf, type ToolApprovalRule } from './worker-tools.js';

/**
 * Variables Steward gives every server's `${VAR}` besides the environment (which wins):
 * STEWARD_FILESYSTEM_SERVER, the entry of the MCP filesystem server when it is installed beside
 * Steward (an optional peer dependency, so that an app that does not use the bundled file-notes
 * package does not install it and its hundred packages).
 */
function builtInVariables(): Record<string, string> {
  try {
    return { STEWARD_FILESYSTEM_SERVER: createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js') };
  } catch {
    return {};
  }
}

export interface RuntimeTools {
  /** The host; made (and the MCP SDK loaded) on first use. */
  host: ToolHost;
  /** The worker turns' toolbox. */
  toolbox: WorkerToolbox;
  /**
   * Why a person's edit of a tool call's arguments (the tool's input schema) or their answer to
   * what a server asked (the form it asked for) is refused, or null: checked with the MCP SDK's
   * validator before the event reaches the chart.
   */
  eventProblem(event: UserEvent, context: SessionContext): Promise<string | null> | null;
  /** Stops every local server. */
  close(): Promise<void>;
}

export function runtimeTools(options: {
  packageOf: (id: string) => SkillPackage | undefined;
  toolApproval?: ToolApprovalRule;
  host?: ToolHostOptions;
}): RuntimeTools {
  let made: ToolHost | undefined;
  let making: Promise<ToolHost> | undefined;
  const real = () =>
    (making ??= import('../mcp/tool-host.js').then(({ createToolHost }) => {
      const env = { ...builtInVariables(), ...(options.host?.env ?? process.env) };
      made = createToolHost({ log: (line) => process.stderr.write(`${line}\n`), ...options.host, env });
      return made;
    }));
  // The answers to a server's forms are checked with the SDK's validator, loaded when first needed.
  let checker: Promise<ReturnType<typeof createSchemaChecker>> | undefined;
  const forms = () => (checker ??= import('../mcp/validate-arguments.js').then((m) => m.createSchemaChecker()));
  // The toolbox validates arguments synchronously (judge): by then its offer has made the host.
  const lazy: ToolHost = {
    listTools: async (server, listing) => (await real()).listTools(server, listing),
    callTool: async (request) => (await real()).callTool(request),
    validateArguments: (definition, args) =>
      made ? made.validateArguments(definition, args) : 'The tool host is not started: the arguments cannot be checked.',
    // A host still being made is closed once made: none is left running after close().
    close: async () => (making ? (await making).close() : undefined),
  };
  return {
    host: lazy,
    toolbox: createWorkerToolbox({ host: lazy, packageOf: options.packageOf, ...(options.toolApproval ? { toolApproval: options.toolApproval } : {}) }),
    eventProblem(event, context) {
      if (event.type === 'user_answered_tool_input') {
        const item = context.reply.toolCalls?.find((c) => c.callId === event.callId && c.status === 'asking');
        // A call that does not ask is the chart's to refuse (answersToolInput), with its own message.
        if (!item?.input) return null;
        const { input } = item;
        return forms().then((check) => answerProblem(item.server, item.tool, input, event.responses, check));
      }
      if (event.type !== 'user_approved_tool_call' || event.arguments === undefined) return null;
      const item = context.reply.toolCalls?.find((c) => c.callId === event.callId);
      const pin = item && pinnedTool(context.package?.pinnedTools, item.server, item.tool);
      // An unknown call is the chart's to refuse (decidesToolCall), with its own message.
      if (!pin) return null;
      const args = event.arguments;
      // The host is made here if this process has not needed it yet (a resumed session): no server starts for it.
      return real().then((host) => {
        const problem = host.validateArguments(definitionOf(pin), args);
        return problem === null ? null : `${problem} Nothing was approved.`;
      });
    },
    close: () => lazy.close(),
  };
}
