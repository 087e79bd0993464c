/**
 * OpenAIModel streaming, end to end: the real `openai` client against the fake server on
 * 127.0.0.1, which answers `stream: true` with SSE chunks (content and tool-call arguments in
 * pieces, usage in the last chunk). A streamed reply must equal the unstreamed one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/core/errors.js';
import type { ModelRequest, ToolSpec } from '../../src/core/models/model.js';
import { OpenAIModel } from '../../src/models/openai-model.js';
import { piecesOf, startFakeOpenAI, type FakeOpenAI, type FakeReply, type FakeStep } from '../support/fake-openai-server.js';

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: FakeStep[]): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(script);
  servers.push(server);
  return server;
}

const modelFor = (server: FakeOpenAI) => new OpenAIModel({ apiKey: 'test-key', baseURL: server.baseURL, model: 'test-model', timeoutMs: 2_000, maxRetries: 0 });

const postNote: ToolSpec = {
  name: 'post_note',
  description: 'Post a note.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  agent: 'manager',
  messages: [{ role: 'user', content: 'Plan the release.' }],
  tools: [postNote],
  ...overrides,
});

const replies: Record<string, FakeReply> = {
  'text only': { content: 'Hello, team. Here is the plan for the release.', usage: { promptTokens: 12, completionTokens: 9 } },
  'tool calls only': {
    toolCalls: [
      { name: 'post_note', arguments: '{"text":"first note, long enough to be cut"}', id: 'call_a' },
      { name: 'post_note', arguments: '{"text":"second"}', id: 'call_b' },
    ],
    usage: { promptTokens: 30, completionTokens: 14 },
  },
  'text and a tool call, no usage': { content: 'Posting it.', toolCalls: [{ name: 'post_note', arguments: '{"text":"x"}', id: 'call_c' }] },
  'malformed arguments stay raw': {
    toolCalls: [{ name: 'post_note', arguments: '{"text": "unterminated', id: 'call_d' }],
    usage: { promptTokens: 1, completionTokens: 2 },
  },
  'one piece each': {
    content: 'ok',
    toolCalls: [{ name: 'post_note', arguments: '{}', id: 'call_e' }],
    pieces: 1,
    usage: { promptTokens: 3, completionTokens: 1 },
  },
};

describe('OpenAIModel streams when someone wants text deltas', () => {
  for (const [name, reply] of Object.entries(replies)) {
    it(`assembles the same reply as without streaming: ${name}`, async () => {
      const server = await serve([{ reply }, { reply }]);
      const model = modelFor(server);
      const plain = await model.complete(request());
      const deltas: string[] = [];
      const streamed = await model.complete(request({ onTextDelta: (text) => deltas.push(text) }));
      expect(streamed).toEqual(plain);
      expect(deltas.join('')).toBe(reply.content ?? '');
      expect(deltas).toEqual(piecesOf(reply.content ?? '', reply.pieces ?? 3));
      expect(server.requests[0]).not.toHaveProperty('stream');
      expect(server.requests[1]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(server.unexpected).toEqual([]);
    });
  }

  it('does not stream without a listener (the request is unchanged)', async () => {
    const server = await serve([{ reply: { content: 'hi' } }]);
    await modelFor(server).complete(request());
    expect(server.requests[0]).not.toHaveProperty('stream');
    expect(server.requests[0]).not.toHaveProperty('stream_options');
  });

  it('delivers the pieces in order while the reply is still arriving', async () => {
    const content = 'one two three four five six';
    const server = await serve([{ reply: { content, pieces: 6, chunkDelayMs: 15 } }]);
    let resolved = false;
    const seen: Array<{ text: string; resolved: boolean }> = [];
    const pending = modelFor(server).complete(request({ onTextDelta: (text) => seen.push({ text, resolved }) }));
    const reply = await pending.finally(() => (resolved = true));
    expect(seen.map((s) => s.text)).toEqual(piecesOf(content, 6));
    expect(seen.every((s) => !s.resolved)).toBe(true);
    expect(reply.content).toBe(content);
  });

  it('maps an error status of a streamed call like an unstreamed one', async () => {
    const server = await serve([{ status: 401 }, { status: 401 }]);
    const model = modelFor(server);
    const plain = await model.complete(request()).catch((e: unknown) => e);
    const streamed = await model.complete(request({ onTextDelta: () => {} })).catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(ModelError);
    expect((streamed as ModelError).message).toBe((plain as ModelError).message);
    expect((streamed as ModelError).message).toMatch(/answered 401.*Check OPENAI_API_KEY/);
  });

  it('stops a streamed call when the caller aborts mid-stream', async () => {
    const server = await serve([{ reply: { content: 'a slow reply in many pieces', pieces: 10, chunkDelayMs: 30 } }]);
    const controller = new AbortController();
    const deltas: string[] = [];
    const pending = modelFor(server).complete(
      request({
        signal: controller.signal,
        onTextDelta: (text) => {
          deltas.push(text);
          if (deltas.length === 2) controller.abort(new Error('stop'));
        },
      }),
    );
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toMatch(/aborted/);
    expect(deltas).toHaveLength(2);
  });
});
