/**
 * Sends a session's inspection events to a remote inspector: Stately's online inspector
 * ('stately') or any WebSocket inspector (`ws://…`, e.g. `@statelyai/inspect/server`).
 *
 * What @statelyai/inspect 0.7.2 offers, and why this file wraps it:
 * - `createBrowserInspector` needs `window`; in Node it logs an error and returns a no-op
 *   adapter (without `.inspect`), so it is no use to a CLI.
 * - `createSkyInspector` works in Node (a PartySocket to Stately's "Sky" relay, then
 *   stately.ai/registry/inspect/<id> shows the session), but its socket is private and
 *   reconnects forever, and it prints to the console.
 * - `createWebSocketInspector` retries every 5 s after an error with a referenced timer,
 *   forever: an unreachable target keeps the process alive.
 * So both targets use `createInspector` (the library's event conversion and serialisation)
 * with {@link OneShotSocketAdapter}: one connection attempt, no retry; once connected the
 * socket is unref'd; when the target is unreachable it says so once through `log` and
 * drops every later event at no cost. So inspection never slows a session and never keeps
 * the process alive — beyond the handshake itself, at most 2 s for a silent host (a closed
 * port fails at once).
 *
 * @example
 * const remote = createRemoteInspect('ws://127.0.0.1:8080', (msg) => console.error(msg));
 * const runtime = createRuntime({ model, store, inspect: remote.inspect });
 * // … on exit:
 * remote.stop();
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import WebSocket from 'ws';
import type { InspectionEvent } from 'xstate';
import { UserError } from '../core/errors.js';

export type RemoteTarget = 'stately' | `ws://${string}` | `wss://${string}`;

export interface RemoteInspect {
  /** Pass to `createRuntime({ inspect })`. */
  inspect: (event: InspectionEvent) => void;
  /** Where to watch the session (Stately's page for 'stately'; the socket URL otherwise). */
  url?: string;
  /** Closes the connection; later events are dropped. */
  stop(): void;
}

/** Stately's relay for the online inspector, as createSkyInspector in @statelyai/inspect 0.7.2 uses it. */
const SKY_HOST = 'stately-sky-beta.mellson.partykit.dev';
const SKY_PAGE = 'https://stately.ai/registry/inspect';
const MAX_QUEUED = 200;
/** The longest an unreachable-but-silent target can hold the process (a refused connection fails at once). */
const HANDSHAKE_TIMEOUT_MS = 2_000;

type SocketState = 'connecting' | 'open' | 'closed';

/** JSON that never throws: cycles become "[Circular]", errors their message, bigints strings. */
export function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'function') return { type: (v as { name?: string }).name || 'function' };
    if (v instanceof Error) return { name: v.name, message: v.message };
    if (v && typeof v === 'object') {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  });
}

/**
 * An @statelyai/inspect adapter over one WebSocket connection: queued events are flushed
 * on open; a failed or lost connection is reported once and never retried.
 */
export class OneShotSocketAdapter {
  private ws: WebSocket | null = null;
  private state: SocketState = 'connecting';
  private queue: string[] = [];
  private reported = false;

  constructor(
    private readonly url: string,
    private readonly log: (msg: string) => void,
    private readonly encode: (event: StatelyInspectionEvent) => string = safeJson,
    private readonly name = url,
  ) {}

  /** True once the connection failed or was stopped: events are dropped. */
  get closed(): boolean {
    return this.state === 'closed';
  }

  start(): void {
    if (this.ws) return;
    let ws: WebSocket;
    let socket: net.Socket | null = null;
    try {
      ws = new WebSocket(this.url, {
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        createConnection: ((options: net.NetConnectOpts & tls.ConnectionOptions) => {
          const base = { ...options, path: undefined };
          socket = this.url.startsWith('wss:')
            ? tls.connect({ ...base, servername: options.servername ?? (net.isIP(String(options.host ?? '')) ? '' : String(options.host ?? '')) })
            : net.connect(base as net.NetConnectOpts);
          return socket;
        }) as never,
      });
    } catch (error) {
      this.fail(error);
      return;
    }
    this.ws = ws;
    ws.on('open', () => {
      if (this.state === 'closed') return;
      this.state = 'open';
      for (const message of this.queue) ws.send(message);
      this.queue = [];
      // Connected: from now on the socket never keeps the process alive (writes in flight
      // still finish). Only the handshake — at most HANDSHAKE_TIMEOUT_MS — is waited for,
      // so a short run still delivers its events.
      (socket as net.Socket | null)?.unref();
    });
    ws.on('error', (error) => this.fail(error));
    ws.on('close', () => {
      if (this.state === 'open') this.report(`Inspector connection to ${this.name} closed; the session goes on without inspection.`);
      this.shut();
    });
    ws.on('message', () => {});
  }

  send(event: StatelyInspectionEvent): void {
    if (this.state === 'closed') return;
    let message: string;
    try {
      message = this.encode(event);
    } catch {
      return; // an event that cannot be serialised is not worth failing a session over
    }
    if (this.state === 'open' && this.ws?.readyState === WebSocket.OPEN) {
      this.ws.send(message);
    } else {
      this.queue.push(message);
      if (this.queue.length > MAX_QUEUED) this.queue.shift();
    }
  }

  stop(): void {
    // A short run can end before the connection attempt does: still say where events went.
    if (this.state === 'connecting') this.report(`Inspector at ${this.name} was not reached before the run ended; its events were dropped.`);
    this.shut();
  }

  private fail(error: unknown): void {
    if (this.state === 'closed') return;
    const reason = (error as { code?: string })?.code ?? (error instanceof Error ? error.message : String(error));
    this.report(`Inspector at ${this.name} is unreachable (${reason}); the session runs without inspection.`);
    this.shut();
  }

  private report(msg: string): void {
    if (this.reported) return;
    this.reported = true;
    this.log(msg);
  }

  private shut(): void {
    this.state = 'closed';
    this.queue = [];
    const ws = this.ws;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      ws.removeAllListeners('error');
      ws.on('error', () => {});
      ws.terminate();
    }
  }
}

/**
 * Options for @statelyai/inspect's `createInspector`. Its default `serializationDepthLimit`
 * (10) cuts the machine definition short, so a transition's guard and action params (e.g.
 * `breaksRule` `{ actor, rule }`) arrived as "[Object]" and the refusal edges looked alike;
 * the session chart is about 12 levels deep, so 64 leaves room for a user's deeper params.
 */
export const STATELY_INSPECTOR_OPTIONS = { serializationDepthLimit: 64 } as const;

function create(
  url: string,
  log: (msg: string) => void,
  encode?: (event: StatelyInspectionEvent) => string,
  name?: string,
): { inspect: (e: InspectionEvent) => void; stop(): void } {
  const adapter = new OneShotSocketAdapter(url, log, encode, name);
  const inspector = createInspector(adapter, STATELY_INSPECTOR_OPTIONS);
  inspector.start();
  return {
    inspect: (event) => {
      // After a failure nothing is converted or serialised: inspection costs nothing.
      if (!adapter.closed) inspector.inspect.next?.(event);
    },
    stop: () => inspector.stop(),
  };
}

/**
 * A remote inspector for `createRuntime({ inspect })`. An unreachable target is reported
 * once through `log`; the session carries on and the process exits as if there were none.
 *
 * @example
 * const remote = createRemoteInspect('ws://127.0.0.1:8080', console.error);
 * const runtime = createRuntime({ model, inspect: remote.inspect });
 */
export function createRemoteInspect(target: RemoteTarget, log: (msg: string) => void): RemoteInspect {
  if (target === 'stately') {
    const id = randomUUID();
    const url = `${SKY_PAGE}/${id}`;
    // STEWARD_STATELY_SOCKET replaces Stately's socket endpoint (a proxy, or a local stand-in in tests).
    const base = process.env.STEWARD_STATELY_SOCKET ?? `wss://${SKY_HOST}`;
    const socketUrl = `${base}/party/inspect-${id}?_pk=${randomUUID()}`;
    // Sky expects superjson; `{ json }` is superjson's form for plain JSON data.
    const remote = create(socketUrl, log, (event) => safeJson({ json: event }), `Stately's online inspector (${new URL(base).host})`);
    log(`Stately inspector: open ${url} (online only; events are sent to ${new URL(base).host}).`);
    return { ...remote, url };
  }
  if (typeof target === 'string' && /^wss?:\/\/[^\s]+$/.test(target)) {
    return { ...create(target, log), url: target };
  }
  throw new UserError(`Unknown inspect target "${String(target)}": use "stately" or a WebSocket URL such as ws://127.0.0.1:8080.`);
}
