/**
 * A worker's MCP tools as its turn sees them: the runtime's toolbox lists and pins them and
 * judges each call of a reply (src/runtime/worker-tools.ts); the turn offers them to the model
 * by the names `serverToolSpec` gives. The chart takes the pins and verdicts from the turn's
 * output (src/core/machines/tool-calls.ts).
 */
import type { PackageWorker, SessionContext } from '../machines/session.context.js';
import type { ModelReply, ToolSpec } from '../models/model.js';
import type { PinnedTool, ToolCallVerdict } from '../tools/server-tools.js';

/**
 * What the runtime gives a worker's turn for MCP tools (src/runtime/worker-tools.ts): the I/O
 * (listing a server's tools, the SDK's schema validator) stays out of the core.
 */
export interface WorkerToolbox {
  /**
   * The tools `worker` may call (its front matter's `tools`), as the model is shown them: a
   * definition the session pinned wins over the server's; `pinned` are those seen for the first time.
   */
  offer(context: SessionContext, worker: PackageWorker): Promise<{ tools: PinnedTool[]; pinned: PinnedTool[] }>;
  /** The verdict on each call of the reply to one of the `offered` tools (policy, arguments), by call id as the reply is queued. */
  judge(context: SessionContext, offered: readonly PinnedTool[], reply: ModelReply): ToolCallVerdict[];
}

/** The tool as a model is offered it (a function named `<server>__<tool>`). */
export function serverToolSpec(tool: PinnedTool): ToolSpec {
  const title = tool.title && tool.title !== tool.name ? `${tool.title}: ` : '';
  return {
    name: tool.modelName,
    description: `${title}${tool.description ?? ''} (tool ${tool.name} of MCP server ${tool.server})`.trim(),
    parameters: tool.inputSchema,
  };
}
