/**
 * A streamed Chat Completions call, for when someone watches the reply as it is written
 * (`ModelRequest.onTextDelta`). The SDK's own ChatCompletionStream assembles the chunks —
 * content, tool calls whose id, name and arguments come in pieces by index, and the usage
 * of the last chunk (`include_usage`) — into the same ChatCompletion a plain call returns,
 * so OpenAIModel maps both the same way and a streamed reply equals an unstreamed one.
 */
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';

type RequestOptions = Parameters<OpenAI['chat']['completions']['stream']>[1];

export async function streamedCompletion(
  client: OpenAI,
  body: Omit<ChatCompletionCreateParamsNonStreaming, 'stream'>,
  options: RequestOptions,
  onTextDelta: (text: string) => void,
): Promise<ChatCompletion> {
  // The SDK sets `stream: true`; usage comes only when asked for.
  const stream = client.chat.completions.stream({ ...body, stream_options: { include_usage: true } }, options);
  stream.on('content', (delta) => {
    if (delta) onTextDelta(delta);
  });
  return stream.finalChatCompletion();
}
