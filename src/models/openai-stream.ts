/**
 * A streamed Chat Completions call, for when someone watches the reply as it is written
 * (`ModelRequest.onTextDelta` / `onToolCallDelta`). The SDK's own ChatCompletionStream
 * assembles the chunks — content, tool calls whose id, name and arguments come in pieces by
 * index, and the usage of the last chunk (`include_usage`) — into the same ChatCompletion a
 * plain call returns, so OpenAIModel maps both the same way and a streamed reply equals an
 * unstreamed one. Each chunk is also passed on as it comes: its content, and each tool-call
 * piece (index, id and name when the chunk carries them, the arguments piece).
 */
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ToolCallDelta } from '../core/models/model.js';

type RequestOptions = Parameters<OpenAI['chat']['completions']['stream']>[1];

export interface StreamListeners {
  onTextDelta?: ((text: string) => void) | undefined;
  onToolCallDelta?: ((delta: ToolCallDelta) => void) | undefined;
}

export async function streamedCompletion(
  client: OpenAI,
  body: Omit<ChatCompletionCreateParamsNonStreaming, 'stream'>,
  options: RequestOptions,
  { onTextDelta, onToolCallDelta }: StreamListeners,
): Promise<ChatCompletion> {
  // The SDK sets `stream: true`; usage comes only when asked for.
  const stream = client.chat.completions.stream({ ...body, stream_options: { include_usage: true } }, options);
  stream.on('chunk', (chunk) => forwardChunk(chunk, onTextDelta, onToolCallDelta));
  return stream.finalChatCompletion();
}

/** The pieces of the first choice (the one the reply is made of), in the chunk's order: text, then tool calls. */
function forwardChunk(chunk: ChatCompletionChunk, onTextDelta: StreamListeners['onTextDelta'], onToolCallDelta: StreamListeners['onToolCallDelta']): void {
  const delta = chunk.choices?.find((c) => c.index === 0)?.delta;
  if (!delta) return;
  if (onTextDelta && typeof delta.content === 'string' && delta.content) onTextDelta(delta.content);
  if (!onToolCallDelta || !Array.isArray(delta.tool_calls)) return;
  for (const call of delta.tool_calls) {
    if (!Number.isInteger(call?.index) || call.index < 0) continue;
    const piece: ToolCallDelta = { index: call.index, arguments: typeof call.function?.arguments === 'string' ? call.function.arguments : '' };
    if (typeof call.id === 'string' && call.id) piece.id = call.id;
    if (typeof call.function?.name === 'string' && call.function.name) piece.name = call.function.name;
    if (piece.arguments || piece.id || piece.name) onToolCallDelta(piece);
  }
}
