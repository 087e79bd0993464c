/**
 * One server under N live sessions: users with think time drive `tiny` sessions through
 * `steward serve` for a measuring window, then the memory figures: the window's sessions and
 * as many more as the server runs at once parked at a wait, then those running one long model
 * call each. Afterwards every acknowledged action is looked up in the journal (nothing lost).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import type { LlmOptions, LlmServer } from './llm-server.js';
import type { ServerProcess, StartServer } from './servers.js';
import { startCrowd, type Action, type Crowd } from './users.js';
import type { ServerStats } from './server-process.js';
import { profileDir, profileLine, profileOf } from './cpu-profile.js';
import { acceptQueue, acceptQueueDrained } from './accept-queue.js';
import { lostActions } from './journal-check.js';
import { percentile, sleep } from './numbers.js';

export interface LoadSettings {
  rampMs: number;
  windowMs: number;
  thinkMinMs: number;
  thinkMaxMs: number;
  llm: LlmOptions;
  /** Starts the model server: in its own process (llm-process.ts), or in the driver's. */
  startModel: (options: LlmOptions) => Promise<LlmServer>;
  startServer: StartServer;
  /** Starts the floor (floor-process.ts): the same users and model calls without Steward. */
  startFloor: StartServer;
  random: () => number;
  /** Skip the memory phase (quick mode's small N says nothing about bytes per session). */
  memory: boolean;
  /** The server's `--max-running`: sessions it runs at once before it answers 429 (0: no limit). */
  maxRunning: number;
  /** The server's `--keep-loaded` (null: its default). */
  keepLoaded: number | null;
  /** Start the window once the ramp's connections are accepted (accept-queue.ts); off where the server is full by design (429s). */
  settle: boolean;
}

/** Steward on a store, or the floor: the same users and model calls through a server that is not Steward. */
export type ServerKind = 'sqlite' | 'postgres' | 'floor';

export interface OneServerFigures {
  store: ServerKind;
  sessions: number;
  actions: number;
  actionsPerSecond: number;
  /** End to end at the user (request sent → answer read) minus the session's model calls. */
  addedMs: Quantiles;
  /** The same inside the server (SessionHost.send minus its model calls): Steward's own share. */
  inServerMs: Quantiles;
  modelMsPerAction: number;
  /**
   * Where "added" and "in server" part: each action whole at the user, each send whole in the
   * server, and the model's time per action as the server's client timed it (against
   * modelMsPerAction, as the model server did).
   */
  endToEndMs: Quantiles;
  sendWholeMs: Quantiles;
  modelAtServerMsPerAction: number;
  eventLoopP99Ms: number;
  /** The server's event loop: the share of the window it ran code, and its garbage-collection pauses in the window. */
  eventLoopBusy: number;
  gcPauses: ServerStats['gcPauses'];
  /** The driver's own event loop: high means the users' process, not Steward, was late. */
  driverEventLoopP99Ms: number;
  cpuMsPerRound: number;
  storeMsPerEvent: number;
  rounds: number;
  throttled: number;
  /** 429s of the server (full at maxRunning) that users waited out, in the window. */
  busyAnswers: number;
  /** 408s of Node's HTTP server the users sent again (see users.ts), in the whole run. */
  requestTimeouts: number;
  /** Answers "runs elsewhere" / "stopping" by code the users waited out (Retry-After), in the whole run. */
  elsewhere: Record<string, number>;
  pgConnections: number | null;
  /** PostgreSQL transactions per send in the window: the server's round trips to the database (none for SQLite). */
  pgTransactionsPerSend: number | null;
  /** What the PostgreSQL connections were doing in the window, most frequent first (none for SQLite). */
  pgDoing: string[];
  /** The store methods that took the most time in the window: name, mean ms, calls. */
  storeMethods: string[];
  waitingBytesPerSession: number | null;
  runningBytesPerSession: number | null;
  heapMbWaiting: number | null;
  sessionsDone: number;
  /** After the ramp, before the window: how long until the server's accept queue stayed empty a second, and its largest meanwhile (accept-queue.ts; null where it cannot be read). */
  settle: { waitedMs: number; largest: number } | null;
  /** The server's largest accept queue sampled in the window. */
  acceptQueueInWindow: number | null;
  lost: number;
  overlaps: number;
  failures: string[];
}

export interface Quantiles {
  p50: number;
  p95: number;
  p99: number;
}

function quantiles(values: readonly number[]): Quantiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

/** Model time of each session's calls inside an action: what the user waited for the model. */
export function addedLatencies(actions: readonly Action[], llm: LlmServer): { added: number[]; model: number[] } {
  const bySession = new Map<number, typeof llm.calls>();
  for (const call of llm.calls) bySession.set(call.session, [...(bySession.get(call.session) ?? []), call]);
  const added: number[] = [];
  const model: number[] = [];
  for (const action of actions) {
    let inside = 0;
    for (const call of bySession.get(action.session) ?? []) if (call.start >= action.start - 1 && call.end <= action.end + 1) inside += call.end - call.start;
    model.push(inside);
    added.push(Math.max(0, action.end - action.start - inside));
  }
  return { added, model };
}

/**
 * Samples the server's PostgreSQL connections: how many are open, and what each is doing
 * (`state wait_event_type:wait_event`, "active CPU" when it waits on nothing) — where the
 * database time of a write goes. And counts the transactions committed or rolled back in the
 * database (`pg_stat_database`): each statement the server sends outside a transaction block is
 * one, so per send they are its round trips to the database (the store's, the leases', the live
 * events'), less this sampler's own queries.
 */
async function connectionSampler(url: string | null) {
  const doing = new Map<string, number>();
  if (!url) return { sample: async () => 0, transactions: async () => 0, doing, end: async () => {} };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let own = 0;
  const sample = async () => {
    own += 1;
    const { rows } = await client.query<{ what: string }>(
      `select state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'CPU') as what from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    for (const { what } of rows) doing.set(what, (doing.get(what) ?? 0) + 1);
    return rows.length;
  };
  /** The database's transactions so far, less those of this sampler. Counts reach the view within a second or so of their commit (PostgreSQL's cumulative statistics). */
  const transactions = async () => {
    own += 1;
    const { rows } = await client.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(rows[0]?.n ?? 0) - (own - 1);
  };
  return { sample, transactions, doing, end: () => client.end() };
}

/** The store methods with the most time between two stats readings. */
function slowestMethods(before: ServerStats, after: ServerStats): string[] {
  return Object.entries(after.storeByMethod)
    .map(([name, t]) => {
      const was = before.storeByMethod[name] ?? { ms: 0, calls: 0 };
      return { name, ms: t.ms - was.ms, calls: t.calls - was.calls };
    })
    .filter((m) => m.calls > 0)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 5)
    .map((m) => {
      const window = [...(after.storeCallMs[m.name] ?? [])].sort((a, b) => a - b);
      return `${m.name} ${(m.ms / m.calls).toFixed(1)} / ${percentile(window, 99).toFixed(1)} ms × ${m.calls}`;
    });
}

/** The most frequent things the connections were doing, as shares of the samples. */
function topDoing(doing: ReadonlyMap<string, number>): string[] {
  const total = [...doing.values()].reduce((a, b) => a + b, 0);
  return [...doing]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([what, n]) => `${what} ${((100 * n) / Math.max(1, total)).toFixed(0)}%`);
}

export async function oneServer(
  kind: ServerKind,
  /** The store (none for the floor). */
  db: string | null,
  sessions: number,
  firstMarker: number,
  settings: LoadSettings,
  say: (line: string) => void,
): Promise<OneServerFigures> {
  const llm = await settings.startModel(settings.llm);
  const start = kind === 'floor' ? settings.startFloor : settings.startServer;
  const server = await start({
    db: db ?? '',
    llmBaseURL: llm.baseURL,
    leaseMs: 30_000,
    owner: 'load server 1',
    maxRunning: settings.maxRunning,
    ...(settings.keepLoaded === null ? {} : { keepLoaded: settings.keepLoaded }),
  });
  const pgSample = await connectionSampler(kind === 'postgres' ? db : null);
  let pgMax = 0;
  try {
    say(`  ${kind} · ${sessions} sessions: ramp ${settings.rampMs / 1000} s, window ${settings.windowMs / 1000} s`);
    // The server before any session: what the memory figures count from.
    const empty = settings.memory ? await server.stats({ gc: true }) : null;
    const crowd = startCrowd(sessions, firstMarker, settings.rampMs, {
      servers: () => [server.url],
      thinkMinMs: settings.thinkMinMs,
      thinkMaxMs: settings.thinkMaxMs,
      random: settings.random,
    });
    await sleep(settings.rampMs);
    const port = Number(new URL(server.url).port);
    const settle = settings.settle ? await acceptQueueDrained(port) : null;
    let acceptQueueInWindow = acceptQueue(port);
    const before = await server.stats({ reset: true });
    const transactionsBefore = await pgSample.transactions();
    const driverDelay = monitorEventLoopDelay({ resolution: 5 });
    driverDelay.enable();
    const t0 = performance.now();
    const busyBefore = crowd.busyAnswers;
    const sampler = setInterval(() => {
      void pgSample.sample().then((n) => (pgMax = Math.max(pgMax, n)));
      const queue = acceptQueue(port);
      if (queue !== null) acceptQueueInWindow = Math.max(acceptQueueInWindow ?? 0, queue);
    }, 500);
    await sleep(settings.windowMs);
    // A window no action both began and ended in measures nothing: on a busy machine (a CI
    // running both benchmarks at once, a shared host) one action can outlast it. It stays open
    // until one has, within a bound a server that finishes none (a failure the run reports) reaches.
    const giveUpAt = performance.now() + 60_000;
    while (!crowd.actions.some((a) => a.start >= t0) && performance.now() < giveUpAt) await sleep(50);
    clearInterval(sampler);
    const after = await server.stats();
    const transactionsInWindow = (await pgSample.transactions()) - transactionsBefore;
    const t1 = performance.now();
    driverDelay.disable();
    const busyAnswers = crowd.busyAnswers - busyBefore;
    await crowd.stop();
    // Actions begun and ended inside the window, which starts once the ramp's burst of
    // connections has been accepted (accept-queue.ts): the steady state.
    const inWindow = crowd.actions.filter((a) => a.start >= t0 && a.end <= t1);
    const rounds = llm.calls.filter((c) => c.end >= t0 && c.end <= t1).length;
    const { added, model } = addedLatencies(inWindow, llm);
    const memory = empty ? await memoryFigures(server, llm, empty, crowd, sessions, firstMarker + 1_000_000, settings, say) : null;
    const figures = windowFigures(kind, sessions, inWindow, added, model, rounds, before, after, (t1 - t0) / 1000, llm);
    const driverEventLoopP99Ms = driverDelay.percentile(99) / 1e6;
    await server.close();
    // LOAD_CPU_PROF=DIR: the server wrote its CPU profile as it exited.
    const profiles = profileDir();
    const profile = profiles ? profileOf(profiles, server.pid) : null;
    if (profile) say(`    where the server's time went (its CPU profile, start to close): ${profileLine(profile)}`);
    // The floor keeps nothing to look in.
    const lost = db === null ? 0 : await lostActions(db, [crowd, ...(memory ? [memory.crowd] : [])]);
    return {
      ...figures,
      driverEventLoopP99Ms,
      busyAnswers,
      requestTimeouts: crowd.requestTimeouts + (memory?.crowd.requestTimeouts ?? 0),
      elsewhere: Object.fromEntries(crowd.elsewhere),
      pgConnections: kind === 'postgres' ? pgMax : null,
      // Per send the server finished in the window (those begun before it too, as the transactions are).
      pgTransactionsPerSend: kind === 'postgres' ? transactionsInWindow / Math.max(1, after.sendWholeMs.length) : null,
      pgDoing: topDoing(pgSample.doing),
      storeMethods: slowestMethods(before, after),
      waitingBytesPerSession: memory?.waiting ?? null,
      runningBytesPerSession: memory?.running ?? null,
      heapMbWaiting: memory?.heapMb ?? null,
      sessionsDone: crowd.sessionsDone,
      settle,
      acceptQueueInWindow,
      lost,
      overlaps: llm.overlaps,
      failures: [...crowd.failures, ...(memory?.crowd.failures ?? [])].slice(0, 20),
    };
  } finally {
    await server.kill().catch(() => {});
    await pgSample.end();
    await llm.close();
  }
}

function windowFigures(
  store: ServerKind,
  sessions: number,
  actions: readonly Action[],
  added: number[],
  model: number[],
  rounds: number,
  before: ServerStats,
  after: ServerStats,
  seconds: number,
  llm: LlmServer,
) {
  return {
    store,
    sessions,
    actions: actions.length,
    actionsPerSecond: actions.length / seconds,
    addedMs: quantiles(added),
    inServerMs: quantiles(after.sendAddedMs),
    endToEndMs: quantiles(actions.map((a) => a.end - a.start)),
    sendWholeMs: quantiles(after.sendWholeMs),
    modelMsPerAction: model.reduce((a, b) => a + b, 0) / Math.max(1, model.length),
    modelAtServerMsPerAction: after.sendModelMs.reduce((a, b) => a + b, 0) / Math.max(1, after.sendModelMs.length),
    eventLoopP99Ms: after.eventLoopP99Ms,
    eventLoopBusy: after.eventLoopBusy,
    gcPauses: after.gcPauses,
    cpuMsPerRound: (after.cpuMs - before.cpuMs) / Math.max(1, rounds),
    storeMsPerEvent: (after.storeMs - before.storeMs) / Math.max(1, actions.length + rounds),
    rounds,
    throttled: llm.throttled,
  };
}

/**
 * Bytes per waiting session: every session the window's users left (each waits for its user
 * once they stop), with as many more parked at their first approval as the server runs at once
 * (N without a limit);
 * counted from the server before any session, so the server's own warm-up (code and caches
 * loaded on first use) is in it too. Then bytes per running session: the parked ones approved,
 * all in one long model call.
 */
async function memoryFigures(
  server: ServerProcess,
  llm: LlmServer,
  empty: ServerStats,
  window: Crowd,
  size: number,
  firstMarker: number,
  settings: LoadSettings,
  say: (line: string) => void,
) {
  const sessions = settings.maxRunning > 0 ? Math.min(settings.maxRunning, size) : size;
  say(`    memory: the window's ${window.sessionsCreated} sessions and ${sessions} more parked at a wait, then those running`);
  // Parking is not what is measured: the model answers fast meanwhile.
  llm.setLatency(20, 100, 4000);
  const rampMs = Math.min(settings.rampMs, sessions * 5);
  const crowd: Crowd = startCrowd(sessions, firstMarker, rampMs, {
    servers: () => [server.url],
    thinkMinMs: 1,
    thinkMaxMs: 2,
    random: settings.random,
    parkAtApproval: true,
  });
  const deadline = performance.now() + rampMs + 120_000;
  while (crowd.parked.length + crowd.failures.length < sessions && performance.now() < deadline) await sleep(250);
  await crowd.stop();
  while ((await server.stats()).held > 0) await sleep(200);
  const waiting = await server.stats({ gc: true });
  // The parked sessions now run one model call that lasts long enough to be measured.
  llm.setLatency(6000, 6000, settings.llm.tokensPerSecond);
  const runs = crowd.parked;
  const approvals = runs.map(({ id }) =>
    fetch(`${server.url}/sessions/${encodeURIComponent(id)}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'user_approved_next_step' }),
    }).then(async (r) => ({ id, ok: r.status === 200 && (await r.text()).length > 0 })),
  );
  const started = performance.now();
  while (llm.inFlight < runs.length && performance.now() - started < 5000) await sleep(100);
  const running = await server.stats({ gc: true });
  const held = running.held;
  for (const answer of await Promise.allSettled(approvals)) {
    if (answer.status === 'fulfilled' && answer.value.ok) crowd.acknowledged.set(answer.value.id, (crowd.acknowledged.get(answer.value.id) ?? 0) + 1);
    else crowd.failures.push(`approval while measuring memory: ${answer.status === 'rejected' ? String(answer.reason) : 'not 200'}`);
  }
  llm.setLatency(settings.llm.minMs, settings.llm.maxMs);
  return {
    crowd,
    waiting: (waiting.heapUsedBytes - empty.heapUsedBytes) / Math.max(1, window.sessionsCreated - window.sessionsDone + crowd.parked.length),
    running: (running.heapUsedBytes - waiting.heapUsedBytes) / Math.max(1, held),
    heapMb: waiting.heapUsedBytes / 1e6,
  };
}
