/**
 * Three servers on one PostgreSQL database while users keep working, and one of them
 * SIGKILLed again and again (then started anew, so three stay). For each kill: how long
 * until the sessions it was running (a model call open at the kill) ran again on another
 * server; over the run: model calls made twice, requests of one session open on two
 * servers at once, and acknowledged actions missing from the journal.
 */
import { callerURL, type Arrival, type LlmOptions, type LlmServer } from './llm-server.js';
import type { ServerProcess, StartServer } from './servers.js';
import { startCrowd } from './users.js';
import { lostActions } from './journal-check.js';
import { monotonicOffsetMs, percentile, sleep } from './numbers.js';

export interface KillSettings {
  users: number;
  kills: number;
  leaseMs: number;
  /** Between two kills: longer than a lease, so each takeover is seen on its own. */
  everyMs: number;
  rampMs: number;
  thinkMinMs: number;
  thinkMaxMs: number;
  llm: LlmOptions;
  startModel: (options: LlmOptions) => Promise<LlmServer>;
  startServer: StartServer;
  random: () => number;
}

export interface KillFigures {
  servers: number;
  kills: number;
  leaseMs: number;
  interrupted: number;
  takeoverMs: { p50: number; p99: number; max: number };
  /** The takeover's two parts: kill → a server's scan claimed the session, and claim → its model call again; by claimer. */
  split: TakeoverSplit;
  /** Interrupted sessions that had not run again by the end. */
  notResumed: number;
  callsRunTwice: number;
  overlaps: number;
  /** Leases a server lost while it ran their sessions, alive (its renewals came too late): the session stopped there and was taken over. */
  leasesLostLive: number;
  /** Every server's lease renewals, as each caller waited for one (where a late renewal waits), and the worst event-loop delay of any server. */
  renewalMs: { p50: number; p99: number; max: number };
  serverEventLoopMaxMs: number;
  lost: number;
  actions: number;
  failures: string[];
}

export interface TakeoverSplit {
  untilClaimMs: { p50: number; p99: number };
  claimToCallMs: { p50: number; p99: number };
  /** Claimed by the server started in the dead one's place, and by the two that lived on. */
  byRestarted: { sessions: number; claimToCallP99Ms: number };
  bySurvivors: { sessions: number; claimToCallP99Ms: number };
  /** Interrupted sessions with no claim seen (claimed by a server killed before it reported). */
  unseen: number;
  /** Each kill's slowest: kill → claimed, and claimed → call (where a tail comes from). */
  perKill: Array<{ victims: number; untilClaimMaxMs: number; claimToCallMaxMs: number }>;
}

/** One server process's life: its index, the kill it was started after (null: at the start), its claims so far. */
interface ServerLife {
  process: ServerProcess;
  startedAfterKill: number | null;
  claims: Array<{ id: string; at: number }>;
  leasesLost: number;
  renewalMs: number[];
  eventLoopMaxMs: number;
}

const p50p99 = (sorted: number[]) => ({ p50: percentile(sorted, 50), p99: percentile(sorted, 99) });
const ascending = (list: number[]) => list.sort((a, b) => a - b);
const spread = (sorted: number[]) => ({ ...p50p99(sorted), max: sorted.at(-1) ?? 0 });

/** Splits each resumed victim's takeover at the claim its server's scan made (times on the monotonic clock, numbers.ts). */
function splitTakeovers(
  kills: ReadonlyArray<{ at: number; victims: number[] }>,
  lives: readonly ServerLife[],
  idOf: ReadonlyMap<number, string>,
  arrivals: ReadonlyMap<number, readonly Arrival[]>,
): TakeoverSplit {
  const epoch = (driverMs: number) => driverMs + monotonicOffsetMs;
  const untilClaim: number[] = [];
  const toCall: number[] = [];
  const restarted: number[] = [];
  const survivors: number[] = [];
  let unseen = 0;
  const perKill: TakeoverSplit['perKill'] = [];
  kills.forEach(({ at, victims }, killIndex) => {
    const killedAt = epoch(at);
    const slowest = { victims: victims.length, untilClaimMaxMs: 0, claimToCallMaxMs: 0 };
    perKill.push(slowest);
    for (const session of victims) {
      const next = arrivals.get(session)?.find((a) => a.at > at);
      const id = idOf.get(session);
      if (!next || id === undefined) continue;
      let first: { at: number; life: ServerLife } | null = null;
      for (const life of lives)
        for (const claim of life.claims) if (claim.id === id && claim.at > killedAt && (!first || claim.at < first.at)) first = { at: claim.at, life };
      if (!first) {
        unseen += 1;
        continue;
      }
      const called = epoch(next.at) - first.at;
      slowest.untilClaimMaxMs = Math.max(slowest.untilClaimMaxMs, Math.round(first.at - killedAt));
      slowest.claimToCallMaxMs = Math.max(slowest.claimToCallMaxMs, Math.round(called));
      untilClaim.push(first.at - killedAt);
      toCall.push(called);
      (first.life.startedAfterKill === killIndex ? restarted : survivors).push(called);
    }
  });
  return {
    untilClaimMs: p50p99(ascending(untilClaim)),
    claimToCallMs: p50p99(ascending(toCall)),
    byRestarted: { sessions: restarted.length, claimToCallP99Ms: percentile(ascending(restarted), 99) },
    bySurvivors: { sessions: survivors.length, claimToCallP99Ms: percentile(ascending(survivors), 99) },
    unseen,
    perKill,
  };
}

/** Calls whose messages a session had already sent (a 429's retry excepted): a model call made twice. */
export function callsRunTwice(arrivals: ReadonlyMap<number, readonly Arrival[]>): number {
  let twice = 0;
  for (const list of arrivals.values()) {
    const seen = new Set<string>();
    for (const arrival of list) {
      if (seen.has(arrival.messages)) twice += 1;
      if (!arrival.throttled) seen.add(arrival.messages);
    }
  }
  return twice;
}

export async function killRun(db: string, firstMarker: number, settings: KillSettings, say: (line: string) => void): Promise<KillFigures> {
  const llm = await settings.startModel(settings.llm);
  // Each server's model requests say which server sent them: a kill's victims are the sessions it had a call open for.
  const callerOf = (i: number) => `server-${i + 1}`;
  const start = (i: number) =>
    settings.startServer({ db, llmBaseURL: callerURL(llm.baseURL, callerOf(i)), leaseMs: settings.leaseMs, owner: `load server ${i + 1}` });
  const servers: ServerProcess[] = [];
  const lives: ServerLife[] = [];
  const started = async (i: number, afterKill: number | null) => {
    const process = await start(i);
    lives.push({ process, startedAfterKill: afterKill, claims: [], leasesLost: 0, renewalMs: [], eventLoopMaxMs: 0 });
    return process;
  };
  const readLife = async (process: ServerProcess) => {
    const life = lives.find((l) => l.process === process)!;
    const stats = await process.stats();
    life.claims = stats.claims;
    life.leasesLost = stats.leasesLost;
    life.renewalMs = stats.renewalMs;
    life.eventLoopMaxMs = stats.eventLoopMaxMs;
  };
  try {
    for (let i = 0; i < 3; i++) servers.push(await started(i, null));
    say(`  postgres · 3 servers · ${settings.users} users · ${settings.kills} kills, lease ${settings.leaseMs} ms`);
    const crowd = startCrowd(settings.users, firstMarker, settings.rampMs, {
      servers: () => servers.map((s) => s.url),
      thinkMinMs: settings.thinkMinMs,
      thinkMaxMs: settings.thinkMaxMs,
      random: settings.random,
    });
    await sleep(settings.rampMs);
    const kills: Array<{ at: number; victims: number[] }> = [];
    const began = performance.now();
    const elapsed = () => `${((performance.now() - began) / 1000).toFixed(0)} s`;
    // A kill's replacement starts in the background, as a supervisor restarts a dead server:
    // the kills keep their pace, and the replacement takes its share of the takeover once up.
    const restarting: Array<Promise<void>> = [];
    for (let i = 0; i < settings.kills; i++) {
      await sleep(settings.everyMs);
      const k = i % servers.length;
      await restarting[k];
      await readLife(servers[k]!);
      const victims = llm.openSessions(callerOf(k));
      const at = performance.now();
      const killedAt = elapsed();
      await servers[k]!.kill();
      kills.push({ at, victims });
      const restart = started(k, i).then((process) => {
        servers[k] = process;
        say(
          `    kill ${i + 1}/${settings.kills} at ${killedAt}: server ${k + 1} (${victims.length} session(s) in a model call); its replacement served ${Math.round(performance.now() - at)} ms after the kill`,
        );
      });
      // Awaited before this server's next kill and after the last; a failed start ends the run there.
      restart.catch(() => {});
      restarting[k] = restart;
    }
    await Promise.all(restarting);
    // Until every session a kill interrupted has made its model call again (taken over), not a
    // fixed wait, which a busy machine (a CI running two benchmarks at once) can outlast. One that
    // never does, the failure this run looks for, is given up on after many leases: not resumed.
    const resumed = () => kills.every(({ at, victims }) => victims.every((session) => llm.arrivals.get(session)?.some((a) => a.at > at)));
    const giveUpAt = performance.now() + settings.leaseMs * 20 + 10_000;
    while (!resumed() && performance.now() < giveUpAt) await sleep(50);
    await crowd.stop();
    for (const server of servers) await readLife(server);
    say(`    users stopped at ${elapsed()}; the servers close and the journal is checked`);
    const delays: number[] = [];
    let notResumed = 0;
    for (const { at, victims } of kills) {
      for (const session of victims) {
        const next = llm.arrivals.get(session)?.find((a) => a.at > at);
        if (next) delays.push(next.at - at);
        else notResumed += 1;
      }
    }
    delays.sort((a, b) => a - b);
    for (const server of servers) await server.close();
    const lost = await lostActions(db, [crowd]);
    return {
      servers: 3,
      kills: kills.length,
      leaseMs: settings.leaseMs,
      interrupted: delays.length + notResumed,
      takeoverMs: spread(delays),
      split: splitTakeovers(kills, lives, crowd.idOf, llm.arrivals),
      notResumed,
      callsRunTwice: callsRunTwice(llm.arrivals),
      overlaps: llm.overlaps,
      leasesLostLive: lives.reduce((sum, life) => sum + life.leasesLost, 0),
      renewalMs: spread(ascending(lives.flatMap((life) => life.renewalMs))),
      serverEventLoopMaxMs: Math.max(0, ...lives.map((life) => life.eventLoopMaxMs)),
      lost,
      actions: crowd.actions.length,
      failures: crowd.failures.slice(0, 20),
    };
  } finally {
    for (const server of servers) await server.kill().catch(() => {});
    await llm.close();
  }
}
