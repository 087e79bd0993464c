/**
 * A tiny OpenAI-compatible server on 127.0.0.1 for end-to-end tests of the real `openai`
 * client over HTTP. It serves a script of steps in order, one per request, and records every
 * request so a test can assert what was sent and how many attempts the SDK made. A request
 * with `stream: true` gets the same reply as Server-Sent Events, the way OpenAI sends it:
 * the role first, the content and each tool call's arguments in pieces (a tool call's id
 * and name only in its first piece, matched by index after), finish_reason, then — when
 * `stream_options.include_usage` is set — a last chunk with no choices and the usage.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  content?: string | null;
  toolCalls?: Array<{ name: string; arguments: string; id?: string }>;
  /** Omitted from the response when not given, like some local servers do. */
  usage?: { promptTokens: number; completionTokens: number };
  /** When streamed: how many pieces the content and each tool call's arguments are cut into (default 3). */
  pieces?: number;
  /**
   * When streamed: cut each tool call's arguments into pieces of this many characters instead
   * (1–3 splits every escape, `\n`, `\"`, `\u00e9`, between two chunks somewhere).
   */
  argumentPieceChars?: number;
  /** When streamed: a pause before each chunk, so a test can see pieces arrive before the end. */
  chunkDelayMs?: number;
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
  /** Requests received and not yet answered (or dropped by the client). */
  readonly inFlight: number;
  close(): Promise<void>;
}

/**
 * `script`: the steps in order, one per request; or a function that answers each request
 * from its body (for many concurrent sessions, whose requests arrive in no fixed order).
 */
export async function startFakeOpenAI(script: FakeStep[] | ((body: unknown, n: number) => Promise<FakeStep>)): Promise<FakeOpenAI> {
  const requests: unknown[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const unexpected: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let served = 0;
  let inFlight = 0;

  const server = createServer((req, res) => {
    inFlight += 1;
    res.once('close', () => (inFlight -= 1));
    void readBody(req)
      .then((raw) => {
        const body = parseJson(raw);
        requests.push(body);
        headers.push(req.headers);
        const n = requests.length;
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          const message = `fake server: unexpected ${req.method} ${req.url} (request #${n})`;
          unexpected.push(message);
          return sendError(res, 404, message);
        }
        if (typeof script === 'function') return script(body, n).then((step) => serve(step, res, body, n, timers));
        const step = script[served++];
        if (!step) {
          const message = `fake server: unexpected extra request #${n}`;
          unexpected.push(message);
          return sendError(res, 500, message);
        }
        serve(step, res, body, n, timers);
      })
      .catch(() => res.destroy());
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
    get inFlight() {
      return inFlight;
    },
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
    const payload = step.body === undefined ? { error: { message: `fake server: scripted status ${step.status}`, type: 'fake_error', code: null } } : step.body;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    res.writeHead(step.status, { 'content-type': 'application/json', 'retry-after-ms': '0', ...step.headers });
    res.end(text);
    return;
  }
  if ((body as { stream?: unknown })?.stream === true) return void streamCompletion(res, step.reply, body, n, timers);
  sendJson(res, 200, completion(step.reply, body, n));
}

/** Cuts `text` into `count` pieces of about equal length (fewer when it is shorter); '' gives none. */
export function piecesOf(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, count)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The `chat.completion.chunk` objects of a streamed reply, in order. */
export function completionChunks(reply: FakeReply, body: unknown, n: number): Record<string, unknown>[] {
  const model = typeof (body as { model?: unknown })?.model === 'string' ? (body as { model: string }).model : 'fake';
  const head = { id: `chatcmpl-fake-${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const pieces = reply.pieces ?? 3;
  const chunks: Record<string, unknown>[] = [chunk({ role: 'assistant', content: '' })];
  for (const text of piecesOf(reply.content ?? '', pieces)) chunks.push(chunk({ content: text }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    const args = reply.argumentPieceChars
      ? piecesOf(call.arguments, Math.ceil(call.arguments.length / reply.argumentPieceChars))
      : piecesOf(call.arguments, pieces);
    chunks.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_${n}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const part of args) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  });
  chunks.push(chunk({}, (reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop'));
  const wantsUsage = (body as { stream_options?: { include_usage?: unknown } })?.stream_options?.include_usage === true;
  if (wantsUsage && reply.usage) {
    const { promptTokens, completionTokens } = reply.usage;
    chunks.push({
      ...head,
      choices: [],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    });
  }
  return chunks;
}

async function streamCompletion(res: ServerResponse, reply: FakeReply, body: unknown, n: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const chunk of completionChunks(reply, body, n)) {
    if (reply.chunkDelayMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, reply.chunkDelayMs);
        timers.add(timer);
      });
    }
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
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
