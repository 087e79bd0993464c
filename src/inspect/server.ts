/**
 * Steward's local inspector: a small node:http server on 127.0.0.1 that serves the
 * inspector page (built by Vite into dist/inspector) and a JSON API behind a random token.
 *
 * Every /api request needs the token (header `x-steward-token` or `?token=`), reads
 * included: 403 otherwise. Requests whose Host is not this server's (DNS rebinding) are
 * refused too. The page's URL carries the token; share it like a password.
 *
 * @example
 * const runtime = createRuntime({ model: new DemoModel(), store });
 * const inspector = await startInspector({ runtime, store, port: 0 });
 * console.log(`Inspector: ${inspector.url}`);
 * // …
 * await inspector.close();
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyMachineSnapshot } from 'xstate';
import { StewardError, UserError } from '../errors.js';
import type { SessionContext } from '../machines/session.context.js';
import { userEventTypes } from '../machines/session.events.js';
import { ManualModel, type ManualReply } from '../models/manual-model.js';
import { storedSnapshot } from '../runtime/persisted.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Session } from '../runtime/session.js';
import { sessionView, type SessionView } from '../runtime/view.js';
import type { SessionStore, StoredSession } from '../store/session-store.js';
import { machineGraph } from './graph.js';
import { LiveHub } from './live-hub.js';
import { JournalReplayer, snapshotState } from './replay.js';

export interface InspectorOptions {
  runtime: Runtime;
  store: SessionStore;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** The session the page opens first. */
  sessionId?: string;
  /** Default: 24 random bytes, hex. */
  token?: string;
  /** Where the built page lives (default: dist/inspector of this package). */
  pageDir?: string;
  /** Where server-side problems are reported (default: console.error). */
  log?: (msg: string) => void;
}

export interface InspectorHandle {
  /** The page's address, token included. */
  url: string;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY = 1_000_000;
/** After an accepted event, how long a POST waits for the session to settle before answering "still running". */
const SETTLE_GRACE_MS = 1_500;

const here = dirname(fileURLToPath(import.meta.url));

/** dist/inspector, from src/inspect (tsx) or dist/src/inspect (compiled). */
export function defaultPageDir(): string {
  const candidates = [resolve(here, '../../dist/inspector'), resolve(here, '../../inspector')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? candidates[0]!;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** decodeURIComponent that answers a malformed escape with a 400, not a 500. */
function decodePart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, `Malformed %-escape in the URL: ${text}`, 'bad_request');
  }
}

/** A non-negative whole number from the query, or undefined when absent; anything else is a 400. */
function countParam(url: URL, name: string): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new HttpError(400, `Query parameter ${name} must be a whole number ≥ 0 (got "${text}").`, 'bad_request');
  return value;
}

class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly code = 'http_error') {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, 'Request body too large (1 MB at most).');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.', 'invalid_json');
  }
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The view of a snapshot: live from the actor, or rebuilt from a stored persisted snapshot. */
/** Starts the inspector; rejects with a clear error when the page has not been built. */
export async function startInspector(options: InspectorOptions): Promise<InspectorHandle> {
  const { runtime, store } = options;
  const host = options.host ?? '127.0.0.1';
  // The page can send events and play the model: it is for this machine only.
  if (!isLoopback(host)) throw new UserError(`The inspector listens on this machine only: use 127.0.0.1, localhost or ::1, not "${host}".`);
  const token = options.token ?? randomBytes(24).toString('hex');
  const log = options.log ?? ((msg: string) => console.error(msg));
  const pageDir = resolve(options.pageDir ?? defaultPageDir());
  const indexFile = join(pageDir, 'index.html');
  if (!existsSync(indexFile)) {
    throw new UserError(`The inspector page is not built (${indexFile} is missing): run "npm run build" (npm install runs it too).`);
  }
  const manual = runtime.model instanceof ManualModel ? runtime.model : null;
  const graph = machineGraph(runtime.machine);
  const replayer = new JournalReplayer(runtime);
  const hub = new LiveHub(runtime, store, manual, (error) => log(`inspector: ${error instanceof Error ? error.message : String(error)}`));
  const inFlight = new Set<Promise<unknown>>();

  /**
   * This process's session, if it is current: not stopped, and not behind the store (another
   * process wrote since; a session of ours still working may be ahead of its own writes).
   */
  function currentLive(id: string, stored: StoredSession | undefined): Session | undefined {
    const live = runtime.live.get(id);
    if (!live || live.actorRef.getSnapshot().status === 'stopped') return undefined;
    const behind = stored !== undefined && live.revision !== undefined && stored.revision > live.revision;
    return behind && live.view().phase !== 'running' ? undefined : live;
  }

  async function sessionPayload(id: string) {
    const stored = await store.load(id);
    const live = currentLive(id, stored);
    if (!stored && !live) throw new HttpError(404, `No session "${id}" in the store.`, 'session_not_found');
    const snapshot = live ? (live.actorRef.getSnapshot() as AnyMachineSnapshot) : storedSnapshot(runtime.machine, stored!);
    const view: SessionView = live ? live.view() : sessionView(snapshot);
    return {
      id,
      revision: stored?.revision ?? null,
      live: !!live,
      updatedAt: stored?.updatedAt ?? null,
      createdAt: stored?.createdAt ?? null,
      view,
      context: snapshot.context as SessionContext,
    };
  }

  /** The session to send to: ours if current; else the stored one, resumed here — unless it is running. */
  async function sessionForSend(id: string): Promise<Session> {
    const stored = await store.load(id);
    const live = currentLive(id, stored);
    if (live) return live;
    if (!stored) throw new HttpError(404, `No session "${id}" in the store.`, 'session_not_found');
    const state = snapshotState(storedSnapshot(runtime.machine, stored));
    if (state.startsWith('running')) {
      throw new HttpError(409, `Session "${id}" is running (${state}), perhaps in another process. Wait until it waits for you, or use "Resume here" if that process is gone (an interrupted model call runs again).`, 'session_running_elsewhere');
    }
    return runtime.resumeSession(id);
  }

  async function sendEvent(id: string, event: unknown) {
    const session = await sessionForSend(id);
    const before = snapshotState(session.actorRef.getSnapshot());
    // Watch for the move before sending: send() may process the event synchronously.
    let sub: { unsubscribe(): void } | null = null;
    const moved = new Promise<void>((resolveMoved) => {
      sub = session.actorRef.subscribe({ next: (s) => {
        if (snapshotState(s) !== before) resolveMoved();
      }, error: () => resolveMoved() });
    });
    const sending = session.send(event);
    inFlight.add(sending);
    void sending.finally(() => {
      sub?.unsubscribe();
      inFlight.delete(sending);
      hub.touch(id);
    });
    // A refused event answers at once; an accepted one answers when the session waits
    // again, or — while a model (or a person playing it) takes its time — after a grace period.
    const settled = await Promise.race([
      sending.then((result) => ({ result })),
      moved.then(() => new Promise<null>((r) => setTimeout(() => r(null), SETTLE_GRACE_MS).unref())),
    ]);
    hub.touch(id);
    if (settled === null) return { ok: true, settled: false, view: session.view() };
    const { result } = settled;
    return result.ok ? { ok: true, settled: true, view: result.view } : { ok: false, settled: true, error: result.error, view: result.view };
  }

  function pendingModel() {
    if (!manual) return { manual: false, label: runtime.model.label, pending: [] };
    const running = [...runtime.live.values()].map((s) => ({ id: s.id, state: snapshotState(s.actorRef.getSnapshot()) }));
    return {
      manual: true,
      label: runtime.model.label,
      pending: manual.pending().map((p) => {
        const candidates = running.filter((s) => s.state.startsWith(`running.${p.agent}`));
        return {
          id: p.id,
          agent: p.agent,
          at: p.at,
          ...(candidates.length === 1 ? { sessionId: candidates[0]!.id } : {}),
          tools: p.request.tools,
          messages: p.request.messages,
        };
      }),
    };
  }

  function manualReply(id: string, body: unknown): void {
    if (!manual) throw new HttpError(409, `The runtime's model is "${runtime.model.label}", not the manual model: start the inspector with --manual to play the model by hand.`, 'not_manual');
    const reply = body as ManualReply;
    if (!reply || typeof reply !== 'object') throw new HttpError(400, 'A reply looks like { content?, toolCalls: [{ name, arguments }] }.', 'invalid_reply');
    const calls = reply.toolCalls ?? [];
    if (!Array.isArray(calls) || calls.some((c) => !c || typeof c.name !== 'string' || !c.name)) {
      throw new HttpError(400, 'Each tool call needs a "name" (and "arguments": an object or JSON text).', 'invalid_reply');
    }
    manual.reply(id, { content: typeof reply.content === 'string' && reply.content.trim() ? reply.content : null, toolCalls: calls.map((c) => ({ name: c.name, arguments: c.arguments ?? {} })) });
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const given = (req.headers['x-steward-token'] as string | undefined) ?? url.searchParams.get('token');
    if (!sameToken(given, token)) throw new HttpError(403, 'Missing or wrong inspector token: open the URL printed by `steward inspect` (it carries ?token=…).', 'forbidden');
    const parts = url.pathname.split('/').filter(Boolean).slice(1).map(decodePart); // drop "api"
    const method = req.method ?? 'GET';
    const route = `${method} /${parts.map((p, i) => (i % 2 === 1 && ['sessions', 'at', 'model'].includes(parts[i - 1]!) ? ':' : p)).join('/')}`;

    switch (route) {
      case 'GET /info':
        return sendJson(res, 200, {
          machineId: graph.id,
          graph,
          model: { label: runtime.model.label, manual: !!manual },
          sessionId: options.sessionId ?? null,
          packages: [...runtime.packages.values()].map((p) => ({ id: p.id, title: p.title })),
          events: userEventTypes,
        });
      case 'GET /stream':
        hub.attach(res, url.searchParams.get('session') || null);
        return;
      case 'GET /sessions': {
        const list = await store.list();
        return sendJson(res, 200, { sessions: list.map((s) => ({ ...s, live: runtime.live.has(s.id) })) });
      }
      case 'POST /sessions': {
        const body = (await readJson(req)) as { packageId?: unknown };
        const packageId = typeof body.packageId === 'string' && body.packageId ? body.packageId : undefined;
        const session = await runtime.createSession(packageId ? { packageId } : {});
        return sendJson(res, 201, { id: session.id, view: session.view() });
      }
      case 'GET /sessions/:':
        return sendJson(res, 200, await sessionPayload(parts[1]!));
      case 'GET /sessions/:/journal': {
        const afterSeq = countParam(url, 'afterSeq') ?? 0;
        const limit = countParam(url, 'limit');
        const entries = await store.journal(parts[1]!, { afterSeq, ...(limit !== undefined ? { limit } : {}) });
        // The timeline needs no payloads (whole model replies): ?payload=0 leaves them out.
        const lean = url.searchParams.get('payload') === '0';
        return sendJson(res, 200, { entries: lean ? entries.map(({ payload: _payload, ...rest }) => rest) : entries });
      }
      case 'GET /sessions/:/at/:': {
        const id = parts[1]!;
        const seq = Number(parts[3]);
        if (!Number.isInteger(seq) || seq < 1) throw new HttpError(400, `Journal entry "${parts[3]}" is not a number ≥ 1.`);
        const entries = await store.journal(id, { limit: seq });
        if (entries.length === 0) throw new HttpError(404, `No journal for session "${id}".`, 'session_not_found');
        const stored = await store.load(id);
        const current = stored ? (storedSnapshot(runtime.machine, stored).context as SessionContext) : undefined;
        const point = replayer.at(id, entries, seq, current);
        return sendJson(res, 200, {
          seq: point.seq,
          state: snapshotState(point.snapshot),
          recordedState: entries[point.seq - 1]?.state ?? null,
          entry: entries[point.seq - 1] ?? null,
          ...(point.divergedAt !== undefined ? { divergedAt: point.divergedAt } : {}),
          view: sessionView(point.snapshot),
          context: point.snapshot.context,
        });
      }
      case 'POST /sessions/:/events': {
        const event = await readJson(req);
        return sendJson(res, 200, await sendEvent(parts[1]!, event));
      }
      case 'POST /sessions/:/resume': {
        const session = await runtime.resumeSession(parts[1]!);
        hub.touch(session.id);
        return sendJson(res, 200, { ok: true, view: session.view() });
      }
      case 'GET /model':
        return sendJson(res, 200, pendingModel());
      case 'POST /model/:/reply':
        manualReply(parts[1]!, await readJson(req));
        return sendJson(res, 200, { ok: true });
      case 'POST /model/:/fail': {
        if (!manual) throw new HttpError(409, 'The runtime does not use the manual model.', 'not_manual');
        const body = (await readJson(req)) as { message?: unknown };
        manual.fail(parts[1]!, typeof body.message === 'string' && body.message ? body.message : undefined);
        return sendJson(res, 200, { ok: true });
      }
      default:
        throw new HttpError(404, `No API route ${method} ${url.pathname}.`, 'not_found');
    }
  }

  function staticFile(res: ServerResponse, pathname: string): void {
    const relative = pathname === '/' ? 'index.html' : normalize(decodePart(pathname)).replace(/^([/\\])+/, '');
    const file = resolve(pageDir, relative);
    if (!file.startsWith(pageDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      // Unknown paths get the page (it reads ?token and ?session itself).
      if (extname(relative)) throw new HttpError(404, `No file ${pathname}.`, 'not_found');
      return staticFile(res, '/');
    }
    const type = contentTypes[extname(file)] ?? 'application/octet-stream';
    res.writeHead(200, {
      'content-type': type,
      'cache-control': file.endsWith('index.html') ? 'no-cache' : 'public, max-age=3600',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(readFileSync(file));
  }

  let allowedHosts = new Set<string>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://inspector.local');
    void (async () => {
      try {
        if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) {
          throw new HttpError(403, `Host "${req.headers.host ?? ''}" is not this inspector; open it at its 127.0.0.1 address.`, 'forbidden_host');
        }
        if (url.pathname === '/api' || url.pathname.startsWith('/api/')) await api(req, res, url);
        else if (req.method === 'GET' || req.method === 'HEAD') staticFile(res, url.pathname);
        else throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}.`, 'method_not_allowed');
      } catch (error) {
        if (res.headersSent) {
          res.end();
          return;
        }
        if (error instanceof HttpError) return sendJson(res, error.status, { ok: false, error: { code: error.code, message: error.message } });
        if (StewardError.isStewardError(error)) {
          const status = error.code === 'session_not_found' ? 404 : error.code === 'conflict' ? 409 : 400;
          return sendJson(res, status, { ok: false, error: { code: error.code, message: error.message } });
        }
        log(`inspector: ${req.method} ${url.pathname} failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
        return sendJson(res, 500, { ok: false, error: { code: 'internal_error', message: error instanceof Error ? error.message : String(error) } });
      }
    })();
  });
  server.keepAliveTimeout = 2_000;

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      hub.close(); // its timers and listeners would otherwise outlive the failed start
      rejectListen(error.code === 'EADDRINUSE'
        ? new UserError(`Port ${options.port} on ${host} is in use: pick another with --port, or 0 for any free port.`)
        : error);
    });
    server.listen(options.port ?? 0, host, () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  allowedHosts = new Set([`${urlHost}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].map((h) => h.toLowerCase()));
  const query = new URLSearchParams({ token, ...(options.sessionId ? { session: options.sessionId } : {}) });

  return {
    url: `http://${urlHost}:${port}/?${query}`,
    token,
    async close() {
      hub.close();
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, 100).unref())]);
      await new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      });
    },
  };
}
