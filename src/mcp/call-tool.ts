/**
 * One `tools/call` on a live connection, and what it came to: a result as text, an
 * `input_required` to hand to a person, or a failure the model reads. Nothing here throws:
 * a timeout, a server that stops mid-call, an answer too large or not MCP at all — each is a
 * `failed` outcome whose message says what happened and what to do. The call's time limit and
 * its cancellation are the caller's (call-under-way.ts): it aborts `signal` and says why.
 */
import { isInputRequiredResult, ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Connection } from './connection.js';
import { flattenResult } from './flatten-result.js';
import { LONGEST_TIMER_MS } from './pausable-timer.js';
import { cut, type ListedTool } from './tool-definitions.js';
import type { CallToolRequest, ToolCallOutcome, ToolFailureReason } from './types.js';

/** A server's own error message, as quoted to the model. */
const QUOTED_ERROR_CHARS = 2_000;

/** An outcome before its duration is known (each kind without `durationMs`). */
export type Outcome = ToolCallOutcome extends infer O ? (O extends unknown ? Omit<O, 'durationMs'> : never) : never;

/** Why the caller stopped a call: its signal, or its time limit. */
export type StopReason = 'cancelled' | 'timeout';

export interface CallOptions {
  /** Aborted to stop the call (the connection's loss stops it too). */
  signal: AbortSignal;
  /** Why `signal` was aborted, once it was. */
  stoppedBecause: () => StopReason | null;
  /** The call's time limit, as the message of a timeout says it. */
  timeoutMs: number;
  resultChars: number;
}

/**
 * Calls `listed` on `connection` with the request's arguments (and answers, on a call made
 * again after `input_required`).
 *
 * @example
 * const controller = new AbortController();
 * const outcome = await callOnConnection(connection, listed, request, { signal: controller.signal, stoppedBecause: () => null, timeoutMs: 60_000, resultChars: 64_000 });
 */
export async function callOnConnection(connection: Connection, listed: ListedTool, request: CallToolRequest, options: CallOptions): Promise<Outcome> {
  try {
    const result = await connection.client.callTool(
      {
        name: listed.tool.name,
        arguments: request.arguments,
        ...(request.inputResponses !== undefined ? { inputResponses: request.inputResponses } : {}),
        ...(request.requestState !== undefined ? { requestState: request.requestState } : {}),
      },
      {
        // The caller keeps the real limit, paused while a person answers (pausable-timer.ts).
        timeout: LONGEST_TIMER_MS,
        // Manual multi-round-trip: an input_required result is returned, not fulfilled or thrown.
        allowInputRequired: true,
        toolDefinition: listed.tool,
        signal: AbortSignal.any([options.signal, connection.lostSignal]),
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
    return { kind: 'failed', error: failureOf(error, connection, listed, options.stoppedBecause(), options.timeoutMs) };
  }
}

/** The outcome with the server's secrets hidden in everything it says. */
export function hiddenOutcome(outcome: Outcome, hide: (text: string) => string): Outcome {
  switch (outcome.kind) {
    case 'result':
      return { ...outcome, text: hide(outcome.text) };
    case 'failed':
      return { ...outcome, error: { ...outcome.error, message: hide(outcome.error.message) } };
    case 'input_required':
      return { ...outcome, requests: JSON.parse(hide(JSON.stringify(outcome.requests))) as typeof outcome.requests };
  }
}

function failureOf(
  error: unknown,
  connection: Connection,
  listed: ListedTool,
  stoppedBecause: StopReason | null,
  timeoutMs: number,
): { reason: ToolFailureReason; message: string } {
  const ref = `${listed.definition.server}.${listed.definition.name}`;
  const server = listed.definition.server;
  const detail = error instanceof Error ? error.message : String(error);
  if (stoppedBecause === 'cancelled') return { reason: 'cancelled', message: `The call of ${ref} was cancelled.` };
  // Before the timeout: the SDK reports an aborted request (the connection was lost) as one.
  const closed = connection.closedBecause !== null || (SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed);
  if (!closed && (stoppedBecause === 'timeout' || (SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout)))
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
