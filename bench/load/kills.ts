/**
 * Three servers on one PostgreSQL database while users keep working, and one of them
 * SIGKILLed again and again (then started anew, so three stay). For each kill: how long
 * until the sessions it was running (a model call open at the kill) ran again on another
 * server; over the run: model calls made twice, requests of one session open on two
 * servers at once, and acknowledged actions missing from the journal.
 */
import { startLlmServer, type Arrival, type LlmOptions } from './llm-server.js';
import { startServer, type ServerProcess } from './servers.js';
import { startCrowd } from './users.js';
import { lostActions } from './journal-check.js';
import { percentile, sleep } from './numbers.js';

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
  random: () => number;
}

export interface KillFigures {
  servers: number;
  kills: number;
  leaseMs: number;
  interrupted: number;
  takeoverMs: { p50: number; p99: number; max: number };
  /** Interrupted sessions that had not run again by the end. */
  notResumed: number;
  callsRunTwice: number;
  overlaps: number;
  lost: number;
  actions: number;
  failures: string[];
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
  const llm = await startLlmServer(settings.llm);
  const start = (i: number) => startServer({ db, llmBaseURL: llm.baseURL, leaseMs: settings.leaseMs, owner: `load server ${i + 1}` });
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < 3; i++) servers.push(await start(i));
    say(`  postgres · 3 servers · ${settings.users} users · ${settings.kills} kills, lease ${settings.leaseMs} ms`);
    const crowd = startCrowd(settings.users, firstMarker, settings.rampMs, {
      servers: () => servers.map((s) => s.url),
      thinkMinMs: settings.thinkMinMs,
      thinkMaxMs: settings.thinkMaxMs,
      random: settings.random,
    });
    await sleep(settings.rampMs);
    const kills: Array<{ at: number; victims: number[] }> = [];
    for (let i = 0; i < settings.kills; i++) {
      await sleep(settings.everyMs);
      const k = i % servers.length;
      const victims = llm.openSessions().filter((s) => crowd.serverOf.get(s) === k);
      const at = performance.now();
      await servers[k]!.kill();
      kills.push({ at, victims });
      servers[k] = await start(k);
      say(`    kill ${i + 1}/${settings.kills}: server ${k + 1} (${victims.length} session(s) in a model call), restarted`);
    }
    // Long enough for the last kill's sessions to be taken over.
    await sleep(settings.leaseMs * 2 + 1000);
    await crowd.stop();
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
      takeoverMs: { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays.at(-1) ?? 0 },
      notResumed,
      callsRunTwice: callsRunTwice(llm.arrivals),
      overlaps: llm.overlaps,
      lost,
      actions: crowd.actions.length,
      failures: crowd.failures.slice(0, 20),
    };
  } finally {
    for (const server of servers) await server.kill().catch(() => {});
    await llm.close();
  }
}
