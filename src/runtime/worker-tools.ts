/**
 * A worker's MCP tools, as the runtime gives them to its turn (the core's `WorkerToolbox`): the
 * tools its front matter names are listed from the package's servers (the tool host starts a
 * local one when first needed), pinned the first time the session sees them, and offered to the
 * model as pinned; each call of the reply is judged — its arguments against the tool's input
 * schema (the MCP SDK's validator) and who decides whether it runs:
 *
 * 1. the deployment: `createRuntime({ toolApproval })`, when it answers `always` or `never`;
 * 2. the manifest: the tool's `approval`, else its server's;
 * 3. the tool's `readOnlyHint`, from a trusted server: it runs without asking;
 * 4. otherwise a person decides — destructive, open-world and unannotated tools alike (MCP says
 *    to treat a tool without annotations as destructive), and every tool of an untrusted server.
 */
import type { WorkerToolbox } from '../core/agents/worker-toolbox.js';
import { UserError } from '../core/errors.js';
import { ownValue } from '../core/blackboard/keyed.js';
import type { PackageWorker, SessionContext } from '../core/machines/session.context.js';
import { queuedReply } from '../core/machines/session.updates.js';
import { approvalOf as manifestApproval } from '../core/skills/mcp-servers.js';
import type { SkillPackage } from '../core/skills/package-schema.js';
import { modelNameOf, pinnedTool, toolPatternAllows, type PinnedTool, type ToolApprovalSource, type ToolCallVerdict } from '../core/tools/server-tools.js';
import type { ToolHost } from '../mcp/tool-host.js';
import type { ServerRef, ToolDefinition } from '../mcp/types.js';

/** A call as the deployment's rule sees it. */
export interface ToolCallForApproval {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  description?: string;
  annotations?: PinnedTool['annotations'];
}

/**
 * The deployment's rule for MCP tool calls: `always` (a person decides), `never` (the call runs
 * at once) or undefined (the manifest and the tool's annotations decide).
 */
export type ToolApprovalRule = (call: ToolCallForApproval, context: SessionContext) => 'always' | 'never' | undefined;

export interface WorkerToolsOptions {
  host: ToolHost;
  /** The package a session runs (its manifest's mcpServers). */
  packageOf: (packageId: string) => SkillPackage | undefined;
  toolApproval?: ToolApprovalRule;
}

/** The server `name` of the package, as the tool host takes it; undefined when the manifest declares none by that name. */
export function serverOf(pkg: SkillPackage | undefined, name: string, variables?: Readonly<Record<string, string>>): ServerRef | undefined {
  const config = pkg && ownValue(pkg.mcpServers, name);
  return config ? { name, config, ...(variables ? { variables } : {}) } : undefined;
}

/** A listed tool as the session pins it, by the model name it gets. */
export function pinOf(definition: ToolDefinition, modelName: string): PinnedTool {
  const { server, name, title, description, inputSchema, annotations, digest } = definition;
  return {
    server,
    name,
    modelName,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    inputSchema,
    ...(annotations ? { annotations: annotations as PinnedTool['annotations'] } : {}),
    digest,
  };
}

/** The pinned tool as the host's validator takes it. */
export const definitionOf = (pin: PinnedTool): ToolDefinition => ({ server: pin.server, name: pin.name, inputSchema: pin.inputSchema, digest: pin.digest });

/** A model name for a new pin that no other tool of the session uses. */
function freshModelName(taken: Set<string>, server: string, tool: string): string {
  const base = modelNameOf(server, tool);
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 60)}_${n}`;
  taken.add(name);
  return name;
}

/**
 * The toolbox of a runtime's worker turns.
 *
 * @example
 * const toolbox = createWorkerToolbox({ host: createToolHost(), packageOf: (id) => packages.get(id) });
 * const workerTurn = createWorkerTurn(model, promptOf, { toolbox });
 */
export function createWorkerToolbox(options: WorkerToolsOptions): WorkerToolbox {
  const { host, packageOf, toolApproval } = options;

  function packageFor(context: SessionContext): SkillPackage {
    const pkg = context.package && packageOf(context.package.id);
    if (!pkg) throw new UserError(`The session's package "${context.package?.id ?? '(none)'}" is not loaded: its MCP servers are unknown.`);
    return pkg;
  }

  function approvalOf(
    pkg: SkillPackage,
    pin: PinnedTool,
    args: Record<string, unknown>,
    context: SessionContext,
  ): { asks: boolean; approvalBy: ToolApprovalSource } {
    const deployment = toolApproval?.(
      {
        server: pin.server,
        tool: pin.name,
        arguments: args,
        ...(pin.description !== undefined ? { description: pin.description } : {}),
        ...(pin.annotations ? { annotations: pin.annotations } : {}),
      },
      context,
    );
    if (deployment !== undefined && deployment !== 'always' && deployment !== 'never')
      throw new UserError(
        `createRuntime({ toolApproval }) answered ${JSON.stringify(deployment)} for ${pin.server}.${pin.name}: return "always", "never" or undefined.`,
      );
    if (deployment) return { asks: deployment === 'always', approvalBy: 'deployment' };
    const config = serverOf(pkg, pin.server)?.config;
    const declared = config && manifestApproval(config, pin.name);
    if (declared) return { asks: declared === 'always', approvalBy: 'manifest' };
    if (config && !config.trusted) return { asks: true, approvalBy: 'untrusted_server' };
    if (pin.annotations?.readOnlyHint === true) return { asks: false, approvalBy: 'read_only' };
    return { asks: true, approvalBy: 'default' };
  }

  return {
    async offer(context: SessionContext, worker: PackageWorker) {
      const pkg = packageFor(context);
      const patterns = worker.tools ?? [];
      const pins = context.package?.pinnedTools ?? [];
      const taken = new Set(pins.map((p) => p.modelName));
      const tools: PinnedTool[] = [];
      const pinned: PinnedTool[] = [];
      for (const name of new Set(patterns.map((p) => p.slice(0, p.indexOf('.'))))) {
        const server = serverOf(pkg, name, context.package?.toolVariables);
        if (!server)
          throw new UserError(
            `Worker "${worker.id}" names tools of MCP server "${name}", which package "${pkg.id}" does not declare in its manifest's mcpServers.`,
          );
        for (const definition of await host.listTools(server)) {
          if (!patterns.some((p) => toolPatternAllows(p, name, definition.name))) continue;
          // Pinned wins: the model is shown the definition the session saw first.
          const known = pinnedTool(pins, name, definition.name);
          const pin = known ?? pinOf(definition, freshModelName(taken, name, definition.name));
          if (!known) pinned.push(pin);
          tools.push(pin);
        }
      }
      return { tools, pinned };
    },

    judge(context: SessionContext, offered: readonly PinnedTool[], reply): ToolCallVerdict[] {
      const pkg = packageFor(context);
      const verdicts: ToolCallVerdict[] = [];
      for (const { call, args } of queuedReply(context, 'worker', reply).queue) {
        const pin = offered.find((t) => t.modelName === call.function.name);
        if (!pin) continue;
        const object = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : null;
        const argumentsError = object ? host.validateArguments(definitionOf(pin), object) : null;
        verdicts.push({
          callId: call.id,
          server: pin.server,
          tool: pin.name,
          ...approvalOf(pkg, pin, object ?? {}, context),
          ...(argumentsError !== null ? { argumentsError } : {}),
        });
      }
      return verdicts;
    },
  };
}
