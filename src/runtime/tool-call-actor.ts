/**
 * The chart's `toolCall` actor as the runtime provides it: runs one approved MCP tool call of a
 * worker's reply through the tool host. Before the server is reached:
 * - the journal holds the call (the write of the step that started it is durable) and the
 *   session still holds its lease: a call is never made by a process that lost the session,
 *   and one whose process dies is known to have been under way;
 * - the tool's definition on the server is the one the call was approved for (its digest): a
 *   tool changed since is not called, and the chart asks a person again.
 * A call the previous process left under way (it died mid-call) is not repeated unless the
 * tool is read-only: it is `interrupted`, and the chart asks a person (run it again, skip it,
 * give its result). A server that asks a person for input (elicitation, `input_required`) ends
 * the call's run with its requests, kept in the journal; the call is made again with the
 * answers, by whichever process holds the session then.
 * Whatever the server does — hang, crash, answer garbage or too much — the outcome is data the
 * model reads (`failed`), never a throw that sticks the session.
 */
import { fromPromise } from 'xstate';
import type { SkillPackage } from '../core/skills/package-schema.js';
import type { ToolCallInput, ToolCallOutput } from '../core/tools/server-tools.js';
import type { ToolHost } from '../mcp/tool-host.js';
import { inputRequestsOf, inputResponsesOf } from './tool-input.js';
import { pinOf, serverOf } from './worker-tools.js';

export interface ToolCallActorOptions {
  host: ToolHost;
  packageOf: (packageId: string) => SkillPackage | undefined;
  /**
   * Resolves when the call may start: the session's journal holds it and its lease is still
   * held (the runtime gives one); a rejection means the call is not made.
   */
  beforeCall?: (input: ToolCallInput, system: object) => Promise<void>;
  /**
   * Whether this is a call that was under way when the process running it stopped (the session
   * was restored in `running.worker.calling`): it may or may not have taken effect. Asked once per start.
   */
  wasInterrupted?: (input: ToolCallInput) => boolean;
}

/** A read-only tool of a trusted server (its annotation was believed when pinned): running it again changes nothing. */
const readOnly = (input: ToolCallInput) => input.pinned.annotations?.readOnlyHint === true;

const failed = (input: ToolCallInput, error: string, durationMs?: number): ToolCallOutput => ({
  callId: input.item.callId,
  outcome: 'failed',
  error,
  ...(durationMs !== undefined ? { durationMs } : {}),
});

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * @example
 * const machine = sessionMachine.provide({ actors: { toolCall: createToolCallActor({ host, packageOf: (id) => packages.get(id) }) } });
 */
export function createToolCallActor(options: ToolCallActorOptions) {
  const { host, packageOf, beforeCall, wasInterrupted } = options;
  return fromPromise<ToolCallOutput, ToolCallInput>(async ({ input, signal, system }) => {
    // No side effect twice: a call cut off by a crash runs again only if it is read-only.
    if (wasInterrupted?.(input) && !readOnly(input)) return { callId: input.item.callId, outcome: 'interrupted' };
    await beforeCall?.(input, system);
    signal.throwIfAborted();
    const { item } = input;
    const server = serverOf(packageOf(input.packageId), item.server, input.variables);
    if (!server) return failed(input, `Package "${input.packageId}" no longer declares the MCP server "${item.server}": the call was not made.`);
    let live;
    try {
      // As the server says now: a tool redeployed since the approval is caught here, not only after a restart.
      live = (await host.listTools(server, { fresh: true })).find((t) => t.name === item.tool);
    } catch (error) {
      return failed(input, messageOf(error));
    }
    if (!live) return failed(input, `The MCP server "${item.server}" no longer has a tool "${item.tool}": the call was not made.`);
    if (live.digest !== item.digest) return { callId: item.callId, outcome: 'definition_changed', definition: pinOf(live, input.pinned.modelName) };
    signal.throwIfAborted();
    // A call made again with a person's answers to what the server asked (and the server's state, unchanged).
    const answered = item.input?.responses
      ? { inputResponses: inputResponsesOf(item.input.responses), ...(item.input.requestState !== undefined ? { requestState: item.input.requestState } : {}) }
      : {};
    const outcome = await host.callTool({ server, tool: item.tool, arguments: item.arguments, signal, ...answered });
    switch (outcome.kind) {
      case 'result':
        return {
          callId: item.callId,
          outcome: 'result',
          text: outcome.text,
          isError: outcome.isError,
          truncated: outcome.truncated,
          durationMs: outcome.durationMs,
        };
      case 'failed':
        return failed(input, outcome.error.message, outcome.durationMs);
      case 'input_required': {
        const asked = inputRequestsOf(outcome.requests);
        if ('problem' in asked) return failed(input, `${asked.problem} The call did not complete.`, outcome.durationMs);
        return {
          callId: item.callId,
          outcome: 'input_required',
          requests: asked.requests,
          ...(outcome.requestState !== undefined ? { requestState: outcome.requestState } : {}),
          durationMs: outcome.durationMs,
        };
      }
    }
  });
}
