/**
 * One `steward serve` of the load benchmark, in its own process as a deployment runs it:
 * the runtime with `OpenAIModel` (the real `openai` client) against the benchmark's model
 * server, on the store the driver names, through `startServe` — plus what the benchmark
 * reads from inside: event-loop delay, memory, CPU time, the time spent in the store, and
 * Steward's own time per user action (a send's duration minus the model calls it made).
 *
 * Compiled with the sources (compile-server.ts) and started with `node --expose-gc` and a
 * JSON config in LOAD_SERVER_CONFIG; it answers the driver over the IPC channel.
 */
import { createRuntime } from '../../src/runtime/runtime.js';
import type { OpenAIModel } from '../../src/models/openai-model.js';
import { openStore } from '../../src/store/open-store.js';
import { startServe } from '../../src/serve/server.js';
import type { ClaimedLease, SessionStore } from '../../src/store/session-store.js';
import type { ChatMessage } from '../../src/core/models/model.js';
import { answerDriver, loadModel, recordSend, sendTimes, type SendTimes } from './driver-link.js';
import { MARKER, markerIn, monotonicOffsetMs } from './numbers.js';

export interface ServerConfig {
  /** SQLite file or postgres:// URL. */
  db: string;
  llmBaseURL: string;
  leaseMs: number;
  /** Name in the leases table (which server ran what). */
  owner: string;
  /** `steward serve --max-running`: sends beyond it answer 429 with Retry-After (0: no limit). */
  maxRunning?: number;
  /** `steward serve --keep-loaded`: sessions kept loaded while they wait (absent: its default). */
  keepLoaded?: number;
}

export interface ServerStats {
  eventLoopP50Ms: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /** The share of the time since the last reset its event loop spent running code (not waiting for I/O). */
  eventLoopBusy: number;
  /** Garbage-collection pauses since the last reset: how many, their total, how many over 10 ms, the longest. */
  gcPauses: { count: number; ms: number; over10Ms: number; maxMs: number };
  heapUsedBytes: number;
  rssBytes: number;
  /** User + system CPU time since the process started. */
  cpuMs: number;
  storeMs: number;
  storeCalls: number;
  /** Store time and calls by method (`leases.claim`, `append`, …), since the process started. */
  storeByMethod: Record<string, { ms: number; calls: number }>;
  /** Each call's duration by method, for calls settled since the last reset: the tail of each. */
  storeCallMs: Record<string, number[]>;
  /** Sessions held in memory now (sends and takeovers under way). */
  held: number;
  /**
   * Each user action's time inside the server (SessionHost.send from call to result) minus
   * the model calls made for it: what Steward added, without the driver's or the network's
   * share. Sends begun since the last reset and finished by now.
   */
  sendAddedMs: number[];
  /** The same sends whole (model calls included), and the model calls' share of each as the server's client timed them. */
  sendWholeMs: number[];
  sendModelMs: number[];
  /** Sessions this server claimed in its takeover scans, with when (monotonic ms, see numbers.ts), since it started. */
  claims: Array<{ id: string; at: number }>;
  /** Each lease renewal's round trip as its caller waited for it (queue, statement, reading the answer), since it started. */
  renewalMs: number[];
  /** Leases it lost while running their sessions (SessionHost.leasesLost), since it started. */
  leasesLost: number;
}

export type DriverMessage = { type: 'stats'; gc?: boolean; reset?: boolean } | { type: 'close' };
export type ServerMessage = { type: 'ready'; url: string; pid: number } | { type: 'stats'; stats: ServerStats } | { type: 'closed' };

/** Each method's calls kept for its tail: far more than a 20-second window makes. */
const MAX_RECENT_CALLS = 100_000;

/** Time and calls of each store method (`append`, `leases.acquireLease`, …), and each call's duration since the last reset. */
type StoreTotals = Map<string, { ms: number; calls: number; recent: number[] }>;

/** Each store method's call as it settles: its name (`append`, `leases.renewLease`, …), duration, and what it resolved with. */
type OnSettled = (name: string, ms: number, value: unknown) => void;

/** Counts the time spent in the store's async methods (journal writes, loads, leases). */
function timed(store: SessionStore, totals: StoreTotals, onSettled: OnSettled): SessionStore {
  const wrap = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver) as unknown;
        if (typeof value !== 'function' || key === 'constructor') return value;
        return (...args: unknown[]) => {
          const start = performance.now();
          const result = (value as (...a: unknown[]) => unknown).apply(object, args);
          if (!(result instanceof Promise)) return result;
          const name = `${prefix}${String(key)}`;
          const settled = (resolved: unknown) => {
            const ms = performance.now() - start;
            const method = totals.get(name) ?? { ms: 0, calls: 0, recent: [] };
            method.ms += ms;
            method.calls += 1;
            // The window's calls (the driver resets at its start); bounded for the phases that never reset (the kills).
            if (method.recent.length < MAX_RECENT_CALLS) method.recent.push(ms);
            totals.set(name, method);
            onSettled(name, ms, resolved);
          };
          return result.then(
            (resolved: unknown) => {
              settled(resolved);
              return resolved;
            },
            (error: unknown) => {
              settled(undefined);
              throw error;
            },
          );
        };
      },
    });
  const leases = store.leases;
  const outer = wrap(store, '');
  if (!leases) return outer;
  const timedLeases = wrap(leases, 'leases.');
  return new Proxy(outer, { get: (object, key, receiver) => (key === 'leases' ? timedLeases : Reflect.get(object, key, receiver)) });
}

/**
 * The sends under way, by their session's marker (`[load-N]`, in the first input and in every
 * prompt after it): a model call adds its duration to its session's send. One send at a time
 * per session, as the users make them. (An AsyncLocalStorage would follow the send without the
 * marker, but on Node 20 it hooks every promise of the process, which the figures would include.)
 */
type SendsUnderWay = Map<string, { modelMs: number }>;

function markerOf(messages: readonly ChatMessage[]): string | undefined {
  for (const message of messages) {
    const found = typeof message.content === 'string' ? MARKER.exec(message.content) : null;
    if (found) return found[1];
  }
  return undefined;
}

/** Adds each model call's duration to the send under way for its session. */
function timedModel(model: OpenAIModel, underWay: SendsUnderWay): OpenAIModel {
  const complete = model.complete.bind(model);
  model.complete = async (request) => {
    const start = performance.now();
    try {
      return await complete(request);
    } finally {
      const marker = markerOf(request.messages);
      const send = marker === undefined ? undefined : underWay.get(marker);
      if (send) send.modelMs += performance.now() - start;
    }
  };
  return model;
}

/**
 * Times every SessionHost.send (the route of a user action) minus its model share. A session's
 * marker is learnt from its first input; a send for a session whose marker this server has not
 * seen (one begun on a server that died) is not timed.
 */
function timeSends(host: Awaited<ReturnType<typeof startServe>>['host'], sends: SendTimes, underWay: SendsUnderWay): void {
  const markers = new Map<string, string>();
  const send = host.send.bind(host);
  host.send = (...args) => {
    const [id, event] = args;
    const given = markerIn(event);
    if (given !== undefined) markers.set(id, given);
    const marker = markers.get(id);
    if (marker === undefined) return send(...args);
    const share = { modelMs: 0 };
    underWay.set(marker, share);
    const start = performance.now();
    return send(...args).finally(() => {
      if (underWay.get(marker) === share) underWay.delete(marker);
      recordSend(sends, start, share.modelMs);
    });
  };
}

/**
 * From the store's calls: the sessions each takeover scan claimed, with when (kills.ts splits a
 * takeover's time with them), and each lease renewal's round trip as its caller waited for it.
 */
function recordLeases(claims: ServerStats['claims'], renewalMs: number[]): OnSettled {
  return (name, ms, value) => {
    if (name === 'leases.renewLease') renewalMs.push(ms);
    if (name !== 'leases.claimExpired' || !Array.isArray(value)) return;
    const at = performance.now() + monotonicOffsetMs;
    for (const lease of value as ClaimedLease[]) claims.push({ id: lease.sessionId, at });
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.LOAD_SERVER_CONFIG ?? '{}') as ServerConfig;
  const totals: StoreTotals = new Map();
  const sends = sendTimes();
  const underWay: SendsUnderWay = new Map();
  const claims: ServerStats['claims'] = [];
  const renewalMs: number[] = [];
  const store = timed(await openStore(config.db), totals, recordLeases(claims, renewalMs));
  const model = timedModel(loadModel(config.llmBaseURL), underWay);
  const runtime = createRuntime({ model, store, leaseOwner: config.owner, leaseMs: config.leaseMs });
  const server = await startServe({
    runtime,
    store,
    port: 0,
    maxCreatesPerMinute: 0,
    leaseMs: config.leaseMs,
    maxRunning: config.maxRunning ?? 0,
    ...(config.keepLoaded === undefined ? {} : { keepLoaded: config.keepLoaded }),
    log: () => {},
  });
  timeSends(server.host, sends, underWay);
  answerDriver({
    url: server.url,
    sends,
    figures: () => ({
      storeMs: [...totals.values()].reduce((sum, t) => sum + t.ms, 0),
      storeCalls: [...totals.values()].reduce((sum, t) => sum + t.calls, 0),
      storeByMethod: Object.fromEntries([...totals].map(([name, t]) => [name, { ms: t.ms, calls: t.calls }])),
      storeCallMs: Object.fromEntries([...totals].map(([name, t]) => [name, [...t.recent]])),
      held: server.host.busy,
      claims: [...claims],
      renewalMs: [...renewalMs],
      leasesLost: server.host.leasesLost,
    }),
    onReset: () => {
      for (const method of totals.values()) method.recent.length = 0;
    },
    close: async () => {
      await server.close();
      await store.close?.();
    },
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`load server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
