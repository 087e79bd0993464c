/**
 * One `tools/call` on a live connection, and what it came to: a result as text, an
 * `input_required` to hand to a person, or a failure the model reads. Nothing here throws:
 * a timeout, a server that stops mid-call, an answer too large or not MCP at all — each is a
 * `failed` outcome whose message says what happened and what to do.
 */
import { isInputRequiredResult, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Connection } from './connection.js';
import { flattenResult } from './flatten-result.js';
import { cut, type ListedTool } from './tool-definitions.js';
import type { CallToolRequest, ToolCallOutcome, ToolFailureReason } from './types.js';

/** A server's own error message, as quoted to the model. */
const QUOTED_ERROR_CHARS = 2_000;

/** An outcome before its duration is known (each kind without `durationMs`). */
export type Outcome = ToolCallOutcome extends infer O ? (O extends unknown ? Omit<O, 'durationMs'> : never) : never;

/**
 * Calls `listed` on `connection` with the request's arguments (and answers, on a call made
 * again after `input_required`).
 *
 * @example
 * const outcome = await callOnConnection(connection, listed, request, { timeoutMs: 60_000, resultChars: 64_000 });
 */
export async function callOnConnection(
  connection: Connection,
  listed: ListedTool,
  request: CallToolRequest,
  options: { timeoutMs: number; resultChars: number },
): Promise<Outcome> {
  try {
    const result = await connection.client.callTool(
      {
        name: listed.tool.name,
        arguments: request.arguments,
        ...(request.inputResponses !== undefined ? { inputResponses: request.inputResponses } : {}),
        ...(request.requestState !== undefined ? { requestState: request.requestState } : {}),
      },
      {
        timeout: options.timeoutMs,
        // Manual multi-round-trip: an input_required result is returned, not fulfilled or thrown.
        allowInputRequired: true,
        toolDefinition: listed.tool,
        signal: request.signal ? AbortSignal.any([request.signal, connection.lostSignal]) : connection.lostSignal,
      },
    );
    if (isInputRequiredResult(result)) {
      return {
        kind: 'input_required',
        requests: result.inputRequests ?? {},
        ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
      };
    }
    const { text, truncated } = flattenResult(result, options.resultChars);
    return { kind: 'result', text, isError: result.isError === true, truncated };
  } catch (error) {
    return { kind: 'failed', error: failureOf(error, connection, listed, request, options.timeoutMs) };
  }
}

function failureOf(
  error: unknown,
  connection: Connection,
  listed: ListedTool,
  request: CallToolRequest,
  timeoutMs: number,
): { reason: ToolFailureReason; message: string } {
  const ref = `${listed.definition.server}.${listed.definition.name}`;
  const server = listed.definition.server;
  const detail = error instanceof Error ? error.message : String(error);
  if (request.signal?.aborted) return { reason: 'cancelled', message: `The call of ${ref} was cancelled.` };
  // Before the timeout: the SDK reports an aborted request (the connection was lost) as one.
  const closed = connection.closedBecause !== null || (SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed);
  if (!closed && SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout)
    return {
      reason: 'timeout',
      message: `${ref} did not answer within ${timeoutMs} ms; the call was abandoned (the server may still be working on it). Try again with less to do, or raise mcpServers.${server}.timeoutMs.`,
    };
  const why = closed ? connection.describeClose() : detail;
  if (/ReadBuffer exceeded maximum size|limits\.messageBytes/.test(why))
    return {
      reason: 'too_large',
      message: `${ref} failed: the server sent a message over the size the host takes (limits.messageBytes)${closed ? ', so its connection was closed; it restarts on the next call' : ''}. If the tool's answer is that large, ask it for less (a narrower query, a page).`,
    };
  if (closed)
    return {
      reason: 'server_stopped',
      message: `The MCP server "${server}" stopped during the call of ${ref} (${cut(why, QUOTED_ERROR_CHARS)}). It restarts on the next call; if the call itself made it stop, calling again with the same arguments will do the same.`,
    };
  if (ProtocolError.isInstance(error)) {
    const unknown = /not found|unknown tool/i.test(detail);
    return {
      reason: unknown ? 'unknown_tool' : 'server_error',
      message: `${ref} failed: the server answered with an error: ${cut(detail, QUOTED_ERROR_CHARS)}`,
    };
  }
  return {
    reason: 'protocol_error',
    message: `${ref} failed: the server's answer could not be used (${cut(detail, QUOTED_ERROR_CHARS)}). Report it to the server's author if it persists.`,
  };
}
