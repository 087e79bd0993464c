/**
 * A tiny OpenAI-compatible server on 127.0.0.1 for end-to-end tests of the real `openai`
 * client over HTTP. It serves a script of steps in order, one per request, and records every
 * request so a test can assert what was sent and how many attempts the SDK made.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  content?: string | null;
  toolCalls?: Array<{ name: string; arguments: string; id?: string }>;
  /** Omitted from the response when not given, like some local servers do. */
  usage?: { promptTokens: number; completionTokens: number };
}

export type FakeStep =
  | { reply: FakeReply }
  /** An error status. `retry-after-ms: 0` is sent unless overridden, so SDK retries are instant. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** A slow response: waits, then serves `then` (unless the client gave up first). */
  | { delayMs: number; then: FakeStep };

export interface FakeOpenAI {
  /** Includes `/v1`, as OPENAI_BASE_URL does. */
  baseURL: string;
  /** Parsed JSON bodies of every request received, including unexpected ones. */
  requests: unknown[];
  /** Request headers, parallel to `requests` (e.g. to check the Authorization header). */
  headers: IncomingHttpHeaders[];
  /** One message per request the script did not foresee: a test should expect this empty. */
  unexpected: string[];
  close(): Promise<void>;
}

export async function startFakeOpenAI(script: FakeStep[]): Promise<FakeOpenAI> {
  const requests: unknown[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const unexpected: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let served = 0;

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const body = parseJson(raw);
      requests.push(body);
      headers.push(req.headers);
      const n = requests.length;
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        const message = `fake server: unexpected ${req.method} ${req.url} (request #${n})`;
        unexpected.push(message);
        return sendError(res, 404, message);
      }
      const step = script[served++];
      if (!step) {
        const message = `fake server: unexpected extra request #${n}`;
        unexpected.push(message);
        return sendError(res, 500, message);
      }
      serve(step, res, body, n, timers);
    }, () => res.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    unexpected,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        // Slow responses keep sockets open; drop them so close() does not hang.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function serve(step: FakeStep, res: ServerResponse, body: unknown, n: number, timers: Set<NodeJS.Timeout>): void {
  if ('delayMs' in step) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) serve(step.then, res, body, n, timers);
    }, step.delayMs);
    timers.add(timer);
    // The client timed out or aborted: nothing left to answer.
    res.once('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
    return;
  }
  if ('status' in step) {
    const payload =
      step.body === undefined
        ? { error: { message: `fake server: scripted status ${step.status}`, type: 'fake_error', code: null } }
        : step.body;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    res.writeHead(step.status, { 'content-type': 'application/json', 'retry-after-ms': '0', ...step.headers });
    res.end(text);
    return;
  }
  sendJson(res, 200, completion(step.reply, body, n));
}

/** A `chat.completion` object as OpenAI returns it. */
function completion(reply: FakeReply, body: unknown, n: number): Record<string, unknown> {
  const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${n}_${i}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const model = typeof (body as { model?: unknown })?.model === 'string' ? (body as { model: string }).model : 'fake';
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.content ?? null,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    ...(reply.usage
      ? {
          usage: {
            prompt_tokens: reply.usage.promptTokens,
            completion_tokens: reply.usage.completionTokens,
            total_tokens: reply.usage.promptTokens + reply.usage.completionTokens,
          },
        }
      : {}),
  };
}

/** `x-should-retry: false` so the SDK reports a script overrun once instead of retrying it. */
function sendError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-should-retry': 'false' });
  res.end(JSON.stringify({ error: { message, type: 'fake_error', code: null } }));
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(payload));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
