/**
 * The OpenAI adapter end to end: the real `openai` client over HTTP against a scripted fake
 * server on 127.0.0.1 (never the internet). Timeouts are tiny and the fake server sends
 * `retry-after-ms: 0`, so the SDK's retries cost no waiting.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError, UserError } from '../../src/core/errors.js';
import type { ChatMessage, ModelRequest, ToolSpec } from '../../src/core/models/model.js';
import { OpenAIModel, modelFromEnv } from '../../src/models/openai-model.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import type { FakeOpenAI, FakeStep } from '../support/fake-openai-server.js';

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script: FakeStep[]): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(script);
  servers.push(server);
  return server;
}

function modelFor(server: FakeOpenAI, options: { timeoutMs?: number; maxRetries?: number } = {}): OpenAIModel {
  return new OpenAIModel({ apiKey: 'test-key', baseURL: server.baseURL, model: 'test-model', timeoutMs: 2_000, ...options });
}

const postNote: ToolSpec = {
  name: 'post_note',
  description: 'Post a note to the blackboard.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', minLength: 1 }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['text'],
    additionalProperties: false,
  },
};

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { agent: 'manager', messages: [{ role: 'user', content: 'Plan the release.' }], tools: [postNote], ...overrides };
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe('OpenAIModel replies', () => {
  it('maps a plain text reply', async () => {
    const server = await serve([{ reply: { content: 'Hello, team.' } }]);
    const reply = await modelFor(server).complete(request());
    expect(reply).toEqual({ content: 'Hello, team.', toolCalls: [] });
    expect(server.requests).toHaveLength(1);
    expect(server.unexpected).toEqual([]);
  });

  it('maps one tool call', async () => {
    const server = await serve([{ reply: { toolCalls: [{ name: 'post_note', arguments: '{"text":"hi"}' }] } }]);
    const reply = await modelFor(server).complete(request());
    expect(reply.content).toBeNull();
    expect(reply.toolCalls).toEqual([{ id: 'call_1_0', type: 'function', function: { name: 'post_note', arguments: '{"text":"hi"}' } }]);
  });

  it('keeps several tool calls of one reply, in order, with their content', async () => {
    const server = await serve([
      {
        reply: {
          content: 'Doing three things.',
          toolCalls: [
            { name: 'post_note', arguments: '{"text":"a"}', id: 'call_a' },
            { name: 'assign', arguments: '{"worker":"w1"}', id: 'call_b' },
            { name: 'post_note', arguments: '{"text":"c"}', id: 'call_c' },
          ],
        },
      },
    ]);
    const reply = await modelFor(server).complete(request());
    expect(reply.content).toBe('Doing three things.');
    expect(reply.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['call_a', 'post_note', '{"text":"a"}'],
      ['call_b', 'assign', '{"worker":"w1"}'],
      ['call_c', 'post_note', '{"text":"c"}'],
    ]);
  });

  it('passes malformed arguments through untouched (the runtime validates them)', async () => {
    const broken = '{"text": "unterminated, tags: [';
    const server = await serve([{ reply: { toolCalls: [{ name: 'post_note', arguments: broken }] } }]);
    const reply = await modelFor(server).complete(request());
    expect(reply.toolCalls[0]?.function.arguments).toBe(broken);
  });

  it('maps usage, and leaves it out when the server sends none', async () => {
    const server = await serve([{ reply: { content: 'a', usage: { promptTokens: 123, completionTokens: 45 } } }, { reply: { content: 'b' } }]);
    const model = modelFor(server);
    expect((await model.complete(request())).usage).toEqual({ promptTokens: 123, completionTokens: 45 });
    expect((await model.complete(request())).usage).toBeUndefined();
  });

  it('is labelled with the model name', async () => {
    const server = await serve([]);
    expect(modelFor(server).label).toBe('test-model');
  });
});

describe('OpenAIModel requests', () => {
  it('sends the messages unchanged and the tools as JSON Schemas', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are the manager.' },
      { role: 'user', content: 'Plan the release.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'post_note', arguments: '{"text":"draft"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
      { role: 'assistant', content: 'Noted.', tool_calls: [] },
    ];
    const server = await serve([{ reply: { content: 'ok' } }]);
    await modelFor(server).complete(request({ messages }));

    const body = server.requests[0] as Record<string, unknown>;
    expect(body.model).toBe('test-model');
    expect(body.messages).toEqual(messages);
    expect(body.tools).toEqual([{ type: 'function', function: { name: postNote.name, description: postNote.description, parameters: postNote.parameters } }]);
    expect(body.tool_choice).toBe('auto');
    expect(body).not.toHaveProperty('parallel_tool_calls');
    expect(body).not.toHaveProperty('stream');
    expect(server.headers[0]?.authorization).toBe('Bearer test-key');
  });

  it('leaves tools and tool_choice out when there are no tools (OpenAI rejects tools: [])', async () => {
    const server = await serve([{ reply: { content: 'ok' } }]);
    await modelFor(server).complete(request({ tools: [] }));
    expect(server.requests[0]).not.toHaveProperty('tools');
    expect(server.requests[0]).not.toHaveProperty('tool_choice');
  });
});

describe('OpenAIModel retries and errors', () => {
  it('retries a 429 and then succeeds', async () => {
    const server = await serve([{ status: 429 }, { reply: { content: 'after the wait' } }]);
    const reply = await modelFor(server).complete(request());
    expect(reply.content).toBe('after the wait');
    expect(server.requests).toHaveLength(2);
  });

  it('gives up on a 500 after maxRetries + 1 attempts with a ModelError', async () => {
    const server = await serve([{ status: 500 }, { status: 502 }, { status: 500 }]);
    const error = await failure(modelFor(server, { maxRetries: 2 }).complete(request()));
    expect(server.requests).toHaveLength(3);
    expect(server.unexpected).toEqual([]);
    expect(error.code).toBe('model_error');
    expect(error.message).toMatch(/answered 500: .*3 attempts/);
    expect(error.cause).toBeInstanceOf(OpenAI.InternalServerError);
  });

  it('does not retry a 401 and says to check OPENAI_API_KEY', async () => {
    const server = await serve([{ status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } }]);
    const error = await failure(modelFor(server).complete(request()));
    expect(server.requests).toHaveLength(1);
    expect(error.message).toContain('answered 401: Incorrect API key provided. Check OPENAI_API_KEY.');
    expect(error.message).toContain('Check OPENAI_API_KEY');
    expect(error.cause).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('turns a response slower than the timeout into a ModelError about the timeout', async () => {
    const server = await serve([{ delayMs: 3_000, then: { reply: { content: 'too late' } } }]);
    const started = Date.now();
    const error = await failure(modelFor(server, { timeoutMs: 150, maxRetries: 0 }).complete(request()));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error.message).toMatch(/timed out.*150 ms/);
    expect(error.message).toContain('STEWARD_TIMEOUT_MS');
    expect(error.cause).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a timed-out attempt (the SDK counts timeouts as retryable)', async () => {
    const server = await serve([{ delayMs: 3_000, then: { reply: { content: 'too late' } } }, { reply: { content: 'second try' } }]);
    const reply = await modelFor(server, { timeoutMs: 150, maxRetries: 1 }).complete(request());
    expect(reply.content).toBe('second try');
    expect(server.requests).toHaveLength(2);
  });

  it('says where the server should be when the connection is refused', async () => {
    const server = await startFakeOpenAI([]);
    await server.close(); // nothing listens on this port any more
    const error = await failure(modelFor(server, { maxRetries: 0 }).complete(request()));
    expect(error.message).toContain(`Is the server at ${server.baseURL} running?`);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.cause).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it('reports a request the fake server did not expect, without retrying it', async () => {
    const server = await serve([]);
    const error = await failure(modelFor(server).complete(request()));
    expect(error.message).toContain('fake server: unexpected extra request #1');
    expect(server.unexpected).toEqual(['fake server: unexpected extra request #1']);
    expect(server.requests).toHaveLength(1);
  });
});

describe('OpenAIModel abort', () => {
  it('cancels an in-flight request quickly when the signal fires', async () => {
    const server = await serve([{ delayMs: 5_000, then: { reply: { content: 'too late' } } }]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(modelFor(server).complete(request({ signal: controller.signal })));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error.message).toContain('request aborted');
    expect(error.cause).toBe(controller.signal.reason);
  });

  it('does not wait out the SDK backoff sleep after an abort', async () => {
    // The SDK sleeps between retries without watching the signal; the adapter must not.
    const server = await serve([{ status: 503, headers: { 'retry-after-ms': '3000' } }, { reply: { content: 'too late' } }]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const error = await failure(modelFor(server).complete(request({ signal: controller.signal })));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error.message).toContain('request aborted');
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the signal has already fired', async () => {
    const server = await serve([{ reply: { content: 'never' } }]);
    const controller = new AbortController();
    controller.abort(new Error('session stopped'));
    const error = await failure(modelFor(server).complete(request({ signal: controller.signal })));
    expect(error.cause).toBe(controller.signal.reason);
    expect(server.requests).toHaveLength(0);
  });
});

describe('modelFromEnv', () => {
  it('returns undefined when neither OPENAI_API_KEY nor OPENAI_BASE_URL is set', () => {
    expect(modelFromEnv({})).toBeUndefined();
    expect(modelFromEnv({ OPENAI_API_KEY: '', OPENAI_BASE_URL: '  ', STEWARD_MODEL: 'gpt-4.1' })).toBeUndefined();
  });

  it('uses OpenAI and gpt-4o-mini by default when only a key is set', () => {
    const model = modelFromEnv({ OPENAI_API_KEY: 'sk-test' });
    expect(model).toBeInstanceOf(OpenAIModel);
    expect(model?.label).toBe('gpt-4o-mini');
    expect((model as OpenAIModel).baseURL).toBe('https://api.openai.com/v1');
    expect((model as OpenAIModel).timeoutMs).toBe(60_000);
    expect((model as OpenAIModel).maxRetries).toBe(2);
  });

  it('reads STEWARD_MODEL and STEWARD_TIMEOUT_MS', () => {
    const model = modelFromEnv({ OPENAI_API_KEY: 'sk-test', STEWARD_MODEL: 'gpt-4.1-mini', STEWARD_TIMEOUT_MS: '1500' }) as OpenAIModel;
    expect(model.label).toBe('gpt-4.1-mini');
    expect(model.timeoutMs).toBe(1500);
  });

  it('rejects a STEWARD_TIMEOUT_MS that is not a positive whole number', () => {
    for (const bad of ['abc', '-5', '0', '1.5']) {
      expect(() => modelFromEnv({ OPENAI_API_KEY: 'sk-test', STEWARD_TIMEOUT_MS: bad })).toThrow(UserError);
    }
  });

  it('talks to a local server with only OPENAI_BASE_URL set, sending a placeholder key', async () => {
    const server = await serve([{ reply: { content: 'local hello' } }]);
    const model = modelFromEnv({ OPENAI_BASE_URL: server.baseURL, STEWARD_MODEL: 'llama3.2' });
    expect(model?.label).toBe('llama3.2');
    const reply = await model?.complete(request());
    expect(reply?.content).toBe('local hello');
    expect(server.headers[0]?.authorization).toBe('Bearer not-needed');
    expect((server.requests[0] as { model: string }).model).toBe('llama3.2');
  });
});
