/**
 * The model of the load benchmark: an OpenAI-compatible server on 127.0.0.1 that thinks
 * like a hosted model does. Each request waits a latency drawn log-uniformly from
 * [minMs, maxMs] (most replies are quick, some are slow), then streams its reply in chunks
 * at `tokensPerSecond`, reports token usage, and a share of requests (`rate429`) is refused
 * with 429 and a short Retry-After first, as a busy provider does.
 *
 * What it says comes from Steward's offline demo model, which plays any package to its end
 * from the conversation alone — so the server needs no per-session state and the sessions
 * run the real package through the real `openai` client.
 *
 * Every request is attributed to the session whose marker (`[load-N]`, the first word of
 * the user's request, carried into every prompt of that session) it contains, and
 * recorded with its start and end: the driver subtracts this model time from what a user
 * waited, and the record shows calls that ran twice or overlapped (two servers running one
 * session at once).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DemoModel } from '../../src/models/demo-model.js';
import type { ChatMessage, ModelReply } from '../../src/core/models/model.js';
import { completionChunks, type FakeReply } from '../../test/support/fake-openai-server.js';
import { MARKER, seeded } from './numbers.js';

export interface LlmOptions {
  minMs: number;
  maxMs: number;
  /** Streaming speed after the first token. */
  tokensPerSecond: number;
  /** Share of requests answered 429 once before they are served. */
  rate429: number;
  retryAfterMs: number;
  /** Seed of the latency and 429 draws (the same run draws the same numbers). */
  seed: number;
  /** Whether the demo's manager proposes independent workers together (default true; bench/fan-out.ts turns it off for its sequential case). */
  fanOut?: boolean;
}

export interface ModelCall {
  session: number;
  start: number;
  end: number;
  /** Time the provider made the client wait before serving it (a 429's Retry-After). */
  throttledMs: number;
}

export interface Arrival {
  at: number;
  /** A digest of the request's messages: the same session and digest twice is a call made twice. */
  messages: string;
  /** Answered 429: its retry carries the same messages and is not a second run. */
  throttled: boolean;
  /** Who sent it: the name in its URL's `/caller/NAME/` prefix (`callerURL`), '' without one. */
  caller: string;
}

/** A base URL for `caller` on the model server at `baseURL`: its requests say who sent them (which server of the bench). */
export function callerURL(baseURL: string, caller: string): string {
  return baseURL.replace(/\/v1$/, `/caller/${encodeURIComponent(caller)}/v1`);
}

const CALLER = /^\/caller\/([^/]+)\//;

export interface LlmServer {
  baseURL: string;
  /** Served calls, in the order they finished. */
  readonly calls: ModelCall[];
  /** Requests answered 429. */
  readonly throttled: number;
  /** Requests being served now. */
  readonly inFlight: number;
  /** Arrival time of every request (429s included), per session: when a session ran again after a kill. */
  readonly arrivals: Map<number, Arrival[]>;
  /** Sessions with a request open now (from `caller` only, when given; a server that dies mid-call closes its connection). */
  openSessions(caller?: string): number[];
  /** Requests that arrived while another request of the same session was still open: one session run twice at once. */
  readonly overlaps: number;
  /** Change the latency range (e.g. long fixed calls to measure running sessions) and the streaming speed (default: as started). */
  setLatency(minMs: number, maxMs: number, tokensPerSecond?: number): void;
  close(): Promise<void>;
}

/**
 * What the model server saw, kept apart from serving it so the same bookkeeping runs where the
 * server runs and, fed over IPC, in the driver (llm-process.ts).
 */
export class LlmRecord {
  readonly calls: ModelCall[] = [];
  readonly arrivals = new Map<number, Arrival[]>();
  throttled = 0;
  inFlight = 0;
  overlaps = 0;
  /** The callers of each session's open requests. */
  private readonly open = new Map<number, string[]>();

  requestOpened(): void {
    this.inFlight += 1;
  }
  requestClosed(): void {
    this.inFlight -= 1;
  }
  /** A request of `session` arrived: a second one open at once is an overlap (one session run twice). */
  arrived(session: number, arrival: Arrival): void {
    this.arrivals.set(session, [...(this.arrivals.get(session) ?? []), arrival]);
    const open = this.open.get(session) ?? [];
    if (open.length > 0) this.overlaps += 1;
    this.open.set(session, [...open, arrival.caller]);
  }
  /** The request of `session` that arrived `at` was answered 429: its retry is not a call made twice. */
  refused(session: number, at: number): void {
    this.throttled += 1;
    const arrival = this.arrivals.get(session)?.findLast((a) => a.at === at);
    if (arrival) arrival.throttled = true;
  }
  left(session: number, caller: string): void {
    const open = [...(this.open.get(session) ?? [])];
    const at = open.indexOf(caller);
    if (at >= 0) open.splice(at, 1);
    if (open.length > 0) this.open.set(session, open);
    else this.open.delete(session);
  }
  served(call: ModelCall): void {
    this.calls.push(call);
  }
  openSessions(caller?: string): number[] {
    return [...this.open].filter(([, callers]) => caller === undefined || callers.includes(caller)).map(([session]) => session);
  }
}

/** The model server's knobs while it runs (the same in its own process, see llm-process.ts). */
export interface LlmControl {
  setLatency(minMs: number, maxMs: number, tokensPerSecond?: number): void;
  close(): Promise<void>;
}

/** Serves the model on 127.0.0.1, noting what it sees in `record`. */
export async function serveLlm(
  options: LlmOptions,
  record: Pick<LlmRecord, 'requestOpened' | 'requestClosed' | 'arrived' | 'refused' | 'left' | 'served'>,
): Promise<LlmControl & { baseURL: string }> {
  const draw = seeded(options.seed);
  const demo = new DemoModel({ fanOut: options.fanOut ?? true });
  let { minMs, maxMs, tokensPerSecond } = options;
  let served = 0;
  // A request refused with 429 is remembered by its body, so its retry is served.
  const refused = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const server = createServer((req, res) => {
    record.requestOpened();
    res.once('close', () => record.requestClosed());
    void readBody(req)
      .then(async (raw) => {
        const start = performance.now();
        const body = JSON.parse(raw) as { messages: ChatMessage[]; tools?: Array<{ function: { name: string } }>; stream?: boolean };
        const session = Number(MARKER.exec(raw)?.[1] ?? -1);
        const caller = decodeURIComponent(CALLER.exec(req.url ?? '')?.[1] ?? '');
        const messages = createHash('sha1').update(JSON.stringify(body.messages)).digest('base64');
        record.arrived(session, { at: start, messages, throttled: false, caller });
        res.once('close', () => record.left(session, caller));
        const retryOf = refused.get(raw);
        if (retryOf === undefined && draw() < options.rate429) {
          record.refused(session, start);
          refused.set(raw, start);
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': String(options.retryAfterMs) });
          res.end(JSON.stringify({ error: { message: 'load bench: rate limited', type: 'rate_limit', code: null } }));
          return;
        }
        refused.delete(raw);
        const agent = body.tools?.some((t) => t.function.name === 'run_worker') ? 'manager' : 'worker';
        const reply = await demo.complete({ agent, messages: body.messages, tools: [] });
        const fake = toFake(reply);
        const tokens = Math.ceil(JSON.stringify(fake).length / 4);
        fake.usage = { promptTokens: Math.ceil(raw.length / 4), completionTokens: tokens };
        // The latency is the time to the first token; then the reply streams at the set speed.
        const latency = minMs * Math.pow(maxMs / minMs, draw());
        const streamMs = (tokens / tokensPerSecond) * 1000;
        const pieces = Math.max(1, Math.min(40, Math.round(tokens / 8)));
        await sleep(latency);
        served += 1;
        const end = await write(res, fake, body, served, pieces, streamMs / pieces, sleep);
        record.served({ session, start: retryOf ?? start, end, throttledMs: retryOf === undefined ? 0 : start - retryOf });
      })
      .catch(() => res.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    setLatency(min, max, speed = options.tokensPerSecond) {
      minMs = min;
      maxMs = max;
      tokensPerSecond = speed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The model server in this process. */
export async function startLlmServer(options: LlmOptions): Promise<LlmServer> {
  const record = new LlmRecord();
  const control = await serveLlm(options, record);
  return llmServer(control.baseURL, record, control);
}

/** An LlmServer read from `record` and steered through `control`. */
export function llmServer(baseURL: string, record: LlmRecord, control: LlmControl): LlmServer {
  return {
    baseURL,
    calls: record.calls,
    get throttled() {
      return record.throttled;
    },
    get inFlight() {
      return record.inFlight;
    },
    arrivals: record.arrivals,
    openSessions: (caller) => record.openSessions(caller),
    get overlaps() {
      return record.overlaps;
    },
    setLatency: (min, max, speed) => control.setLatency(min, max, speed),
    close: () => control.close(),
  };
}

function toFake(reply: ModelReply): FakeReply {
  return { content: reply.content, toolCalls: reply.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) };
}

async function write(
  res: ServerResponse,
  reply: FakeReply,
  body: { stream?: boolean },
  n: number,
  pieces: number,
  gapMs: number,
  sleep: (ms: number) => Promise<void>,
): Promise<number> {
  // The end is read before the last bytes go out: once they have, the client may read them
  // before this process runs again, and a call must not seem to end after its reply arrived.
  if (body.stream !== true) {
    // Not streamed: the whole reply after the streaming time.
    await sleep(gapMs * pieces);
    const chunks = completionChunks({ ...reply, pieces: 1 }, body, n);
    res.writeHead(200, { 'content-type': 'application/json' });
    const end = performance.now();
    res.end(JSON.stringify(joinChunks(chunks)));
    return end;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunks = completionChunks({ ...reply, pieces }, body, n);
  // One pause per piece of content or arguments: the stream's speed.
  for (const chunk of chunks) {
    if (res.destroyed) return performance.now();
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    if (gapMs >= 1) await sleep(gapMs);
  }
  const end = performance.now();
  res.end('data: [DONE]\n\n');
  return end;
}

/** A non-streamed `chat.completion` from the chunks of the same reply. */
function joinChunks(chunks: Record<string, unknown>[]): Record<string, unknown> {
  type Delta = { content?: string; tool_calls?: Array<{ index: number; id?: string; function: { name?: string; arguments?: string } }> };
  let content = '';
  const tools: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  let usage: unknown;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    const choice = (chunk.choices as Array<{ delta: Delta }> | undefined)?.[0];
    if (!choice) continue;
    content += choice.delta.content ?? '';
    for (const call of choice.delta.tool_calls ?? []) {
      const slot = (tools[call.index] ??= { id: call.id ?? '', type: 'function', function: { name: '', arguments: '' } });
      slot.function.name += call.function.name ?? '';
      slot.function.arguments += call.function.arguments ?? '';
    }
  }
  const head = chunks[0] as { id: string; created: number; model: string };
  return {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: content || null, ...(tools.length ? { tool_calls: tools } : {}) },
        finish_reason: tools.length ? 'tool_calls' : 'stop',
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
