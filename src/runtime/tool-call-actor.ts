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
 * answers, by whichever process holds the session then. A server of an earlier revision asks
 * on the live connection instead, inside the call (`live`): the tool host holds the question
 * under the session's and the call's ids, and the answers go to that call, which is not made
 * again. A process that no longer holds it (it restarted) cannot answer it: the call is
 * `interrupted`, since it may or may not have taken effect.
 * Whatever the server does — hang, crash, answer garbage or too much — the outcome is data the
 * model reads (`failed`), never a throw that sticks the session.
 */
import { fromPromise } from 'xstate';
import type { SkillPackage } from '../core/skills/package-schema.js';
import type { ToolCallInput, ToolCallOutput } from '../core/tools/server-tools.js';
import type { ToolHost } from '../mcp/tool-host.js';
import type { ServerRef, ToolCallOutcome } from '../mcp/types.js';
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

/** The name the tool host holds a call's live question under: one per call of a session. */
const heldKeyOf = (input: ToolCallInput) => JSON.stringify([input.sessionId, input.item.callId]);

/**
 * @example
 * const machine = sessionMachine.provide({ actors: { toolCall: createToolCallActor({ host, packageOf: (id) => packages.get(id) }) } });
 */
export function createToolCallActor(options: ToolCallActorOptions) {
  const { host, packageOf, beforeCall, wasInterrupted } = options;

  /** Why the call is not made as approved (the actor's output), or null: its tool is the one approved. */
  async function notAsApproved(input: ToolCallInput, server: ServerRef): Promise<ToolCallOutput | null> {
    const { item } = input;
    let live;
    try {
      // As the server says now: a tool redeployed since the approval is caught here, not only after a restart.
      live = (await host.listTools(server, { fresh: true })).find((t) => t.name === item.tool);
    } catch (error) {
      return failed(input, messageOf(error));
    }
    if (!live) return failed(input, `The MCP server "${item.server}" no longer has a tool "${item.tool}": the call was not made.`);
    if (live.digest !== item.digest) return { callId: item.callId, outcome: 'definition_changed', definition: pinOf(live, input.pinned.modelName) };
    return null;
  }

  return fromPromise<ToolCallOutput, ToolCallInput>(async ({ input, signal, system }) => {
    // No side effect twice: a call cut off by a crash runs again only if it is read-only.
    if (wasInterrupted?.(input) && !readOnly(input)) return { callId: input.item.callId, outcome: 'interrupted' };
    await beforeCall?.(input, system);
    signal.throwIfAborted();
    const { item } = input;
    const server = serverOf(packageOf(input.packageId), item.server, input.variables);
    if (!server) return failed(input, `Package "${input.packageId}" no longer declares the MCP server "${item.server}": the call was not made.`);
    const call = { server, tool: item.tool, arguments: item.arguments, signal, heldKey: heldKeyOf(input) };
    const asked = item.input;
    // Answers to a question asked inside the call: the call is under way already, and is neither checked nor made again.
    if (asked?.live && asked.responses)
      return outputOf(input, await host.callTool({ ...call, answersHeld: true, inputResponses: inputResponsesOf(asked.responses) }));
    const refused = await notAsApproved(input, server);
    if (refused) return refused;
    signal.throwIfAborted();
    // A call made again with a person's answers to what the server asked (and the server's state, unchanged).
    const answered = asked?.responses
      ? { inputResponses: inputResponsesOf(asked.responses), ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}) }
      : {};
    return outputOf(input, await host.callTool({ ...call, ...answered }));
  });
}

/** The actor's output for what the tool host says the call came to. */
function outputOf(input: ToolCallInput, outcome: ToolCallOutcome): ToolCallOutput {
  const { callId } = input.item;
  switch (outcome.kind) {
    case 'result':
      return { callId, outcome: 'result', text: outcome.text, isError: outcome.isError, truncated: outcome.truncated, durationMs: outcome.durationMs };
    case 'failed':
      // Its server's question could not be answered by this process: whether the call took effect is unknown.
      if (outcome.error.reason === 'live_input_lost') return { callId, outcome: 'interrupted' };
      return failed(input, outcome.error.message, outcome.durationMs);
    case 'input_required': {
      const asked = inputRequestsOf(outcome.requests);
      if ('problem' in asked) return failed(input, `${asked.problem} The call did not complete.`, outcome.durationMs);
      return {
        callId,
        outcome: 'input_required',
        requests: asked.requests,
        ...(outcome.requestState !== undefined ? { requestState: outcome.requestState } : {}),
        ...(outcome.live ? { live: true } : {}),
        durationMs: outcome.durationMs,
      };
    }
  }
}
