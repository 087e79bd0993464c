/**
 * Simulated users of the load benchmark. Each user drives one session of the `tiny`
 * package through `steward serve` over HTTP, as a person at a web page would: create it,
 * type the request, then at every wait think a while (drawn from [thinkMinMs, thinkMaxMs])
 * and click yes (approve the step, accept the artifact); at `done` start the next session.
 *
 * Every action is timed end to end (request sent → the session waits again or is done) and
 * recorded with the session's marker, so the run can subtract the model's own time and
 * check afterwards that no acknowledged action is missing from the journal. When a server
 * stops answering, a user moves to the next server and sends the same action again; when it
 * answers 429 (full: `--max-running`), or that the session runs elsewhere (a takeover under
 * way), the user waits its Retry-After and sends again, and the action's time includes that
 * wait.
 */
import type { SessionView } from '../../src/core/view.js';
import { nextEvent } from '../../test/serve/http.js';
import { requestFor } from './numbers.js';

export interface Action {
  session: number;
  sessionId: string;
  kind: string;
  start: number;
  end: number;
  status: number;
}

export interface UserOptions {
  servers: () => readonly string[];
  thinkMinMs: number;
  thinkMaxMs: number;
  random: () => number;
  /** Park every session at its first approval instead of answering it (memory figures). */
  parkAtApproval?: boolean;
}

export interface Crowd {
  readonly actions: Action[];
  /** Acknowledged user events per session id (the journal must hold at least these). */
  readonly acknowledged: Map<string, number>;
  /** Sessions parked (parkAtApproval) and their server index. */
  readonly parked: Array<{ session: number; id: string; server: number }>;
  readonly sessionsDone: number;
  /** Sessions the users created (done or not). */
  readonly sessionsCreated: number;
  /** 429 answers (server full) the users waited out and sent again. */
  readonly busyAnswers: number;
  /**
   * 408 answers sent again: Node's HTTP server closed the connection before the request
   * reached a route (nothing was taken), which HTTP lets a client repeat.
   */
  readonly requestTimeouts: number;
  /** Answers that the session runs elsewhere or the server stops (by code), waited out and sent again. */
  readonly elsewhere: ReadonlyMap<string, number>;
  readonly failures: string[];
  /** Each session's id by its marker number. */
  readonly idOf: Map<number, string>;
  stop(): Promise<void>;
}

const RETRY_MS = 100;

interface Reply {
  status: number;
  /** Seconds, from a 429's Retry-After (null when absent or not a number). */
  retryAfter: number | null;
  /** Create and get: { view, revision }; send: the SendResult ({ ok, view, revision } or { ok: false, error, … }). */
  body: { view?: SessionView; revision?: number | null; ok?: boolean; error?: { code?: string } };
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const retryAfter = Number(res.headers.get('retry-after') ?? Number.NaN);
  return { status: res.status, retryAfter: Number.isFinite(retryAfter) ? retryAfter : null, body: text ? (JSON.parse(text) as Reply['body']) : {} };
}

/** Starts `count` users, their first actions spread over `rampMs`; marker numbers from `firstMarker`. */
export function startCrowd(count: number, firstMarker: number, rampMs: number, options: UserOptions): Crowd {
  const actions: Action[] = [];
  const acknowledged = new Map<string, number>();
  const parked: Crowd['parked'] = [];
  const failures: string[] = [];
  const idOf = new Map<number, string>();
  let stopped = false;
  let marker = firstMarker;
  let sessionsDone = 0;
  let sessionsCreated = 0;
  let busyAnswers = 0;
  let requestTimeouts = 0;
  const elsewhere = new Map<string, number>();
  const sleeps = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleeps.add(wake);
    });
  const think = () => options.thinkMinMs * Math.pow(options.thinkMaxMs / options.thinkMinMs, options.random());

  /** One request, moved to the next server while one does not answer. */
  async function attempt(server: { index: number }, method: string, path: string, body?: unknown): Promise<Reply> {
    for (;;) {
      const list = options.servers();
      try {
        const reply = await call(list[server.index % list.length]!, method, path, body);
        // Running elsewhere (a takeover under way) or shutting down: wait as the server says
        // (Retry-After), then again.
        if (reply.status === 503 || reply.body.error?.code === 'session_running_elsewhere' || reply.body.error?.code === 'lease_lost') {
          if (stopped) return reply;
          const code = reply.body.error?.code ?? String(reply.status);
          elsewhere.set(code, (elsewhere.get(code) ?? 0) + 1);
          await sleep(Math.max(RETRY_MS, (reply.retryAfter ?? 0) * 1000));
          continue;
        }
        if (reply.status === 408 && !stopped) {
          requestTimeouts += 1;
          await sleep(RETRY_MS);
          continue;
        }
        if (reply.status === 429 && !stopped) {
          busyAnswers += 1;
          await sleep(Math.max(RETRY_MS, (reply.retryAfter ?? 1) * 1000));
          continue;
        }
        return reply;
      } catch {
        if (stopped) throw new Error('stopped');
        server.index += 1;
        await sleep(RETRY_MS);
      }
    }
  }

  async function user(index: number): Promise<void> {
    await sleep((rampMs * index) / Math.max(1, count));
    const server = { index };
    while (!stopped) {
      const session = marker++;
      const created = await attempt(server, 'POST', '/sessions', { packageId: 'tiny' });
      if (created.status !== 201) {
        failures.push(`create: ${created.status} ${JSON.stringify(created.body).slice(0, 200)}`);
        return;
      }
      sessionsCreated += 1;
      let view = created.body.view!;
      let revision = created.body.revision ?? null;
      const id = view.id;
      idOf.set(session, id);
      const request = requestFor(session);
      while (!stopped && view.phase !== 'done') {
        const event = nextEvent(view, request);
        if (options.parkAtApproval && view.waitingReason === 'approve_step') {
          parked.push({ session, id, server: server.index });
          return;
        }
        if (event.type !== 'user_submitted_input' || view.waitingReason !== 'intake') await sleep(think());
        if (stopped) return;
        const start = performance.now();
        const reply = await attempt(server, 'POST', `/sessions/${encodeURIComponent(id)}/events`, event);
        const end = performance.now();
        // A 429 comes back only once the run stops: the server never took the action.
        if (reply.status === 429) return;
        if (reply.status === 200) {
          actions.push({ session, sessionId: id, kind: event.type, start, end, status: reply.status });
          acknowledged.set(id, (acknowledged.get(id) ?? 0) + 1);
          view = reply.body.view!;
          revision = reply.body.revision ?? null;
        } else {
          // The event may have landed on a server that died before it answered: read where the session is.
          let fresh = await attempt(server, 'GET', `/sessions/${encodeURIComponent(id)}`);
          // Taken over and running again elsewhere: wait until it waits for the user.
          while (!stopped && fresh.status === 200 && fresh.body.view?.phase === 'running') {
            await sleep(RETRY_MS * 2);
            fresh = await attempt(server, 'GET', `/sessions/${encodeURIComponent(id)}`);
          }
          if (fresh.status !== 200) {
            failures.push(`${event.type} on ${id}: ${reply.status}, then GET ${fresh.status}`);
            return;
          }
          if (fresh.body.revision === revision) failures.push(`${event.type} on ${id}: ${reply.status} ${JSON.stringify(reply.body.error ?? {})}`);
          view = fresh.body.view!;
          revision = fresh.body.revision ?? null;
        }
      }
      if (view.phase === 'done') sessionsDone += 1;
    }
  }

  const running = Array.from({ length: count }, (_, i) =>
    user(i).catch((error: unknown) => {
      if (!stopped) failures.push(`user ${i}: ${error instanceof Error ? error.message : String(error)}`);
    }),
  );
  return {
    actions,
    acknowledged,
    parked,
    failures,
    idOf,
    get sessionsDone() {
      return sessionsDone;
    },
    get sessionsCreated() {
      return sessionsCreated;
    },
    get busyAnswers() {
      return busyAnswers;
    },
    elsewhere,
    get requestTimeouts() {
      return requestTimeouts;
    },
    async stop() {
      stopped = true;
      for (const wake of [...sleeps]) wake();
      await Promise.all(running);
    },
  };
}
