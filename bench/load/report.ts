/** The load benchmark's tables, its targets, and what counts as a correctness problem. */
import type { KillFigures } from './kills.js';
import type { OneServerFigures } from './one-server.js';

/** The targets at 1,000 sessions on this machine (model latency 0.3–3 s). */
export const TARGETS = { addedP99Ms: 50, eventLoopP99Ms: 20, waitingBytes: 20 * 1024 } as const;

/** Steward's added p99 at the user, at most this many times the floor's of the same run and size. */
const FLOOR_RATIO_TARGETS = { sqlite: 1.5, postgres: 2 } as const;

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const kb = (n: number | null) => (n === null ? '—' : `${(n / 1024).toFixed(1)} KB`);

function mark(ok: boolean): string {
  return ok ? '' : ' ✗';
}

export function printRuns(runs: readonly OneServerFigures[], say: (line: string) => void): void {
  if (runs.length === 0) return;
  say('One server · N live sessions (users think between actions)');
  say(
    '| store | sessions | actions/s | added p50 / p95 / p99 ms | of it in server p50 / p95 / p99 ms | model ms/action | event loop p99 ms (driver) | loop busy · GC pauses > 10 ms | CPU ms/round | store ms/event | PG conns | bytes/waiting | bytes/running | heap, all waiting | 429s waited out | done | lost |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of runs) {
    // The floor is not Steward: its figures are what the machine adds, against no target; it has no store and no in-server share.
    const floor = r.store === 'floor';
    const atTarget = !floor && r.sessions <= 1000;
    say(
      `| ${floor ? 'floor (not Steward)' : r.store} | ${r.sessions} | ${r.actionsPerSecond.toFixed(1)} | ${ms(r.addedMs.p50)} / ${ms(r.addedMs.p95)} / ${ms(r.addedMs.p99)}${mark(!atTarget || r.addedMs.p99 <= TARGETS.addedP99Ms)} | ` +
        `${floor ? '—' : `${ms(r.inServerMs.p50)} / ${ms(r.inServerMs.p95)} / ${ms(r.inServerMs.p99)}`}${mark(!atTarget || r.inServerMs.p99 <= TARGETS.addedP99Ms)} | ` +
        `${ms(r.modelMsPerAction)} | ${ms(r.eventLoopP99Ms)}${mark(!atTarget || r.eventLoopP99Ms <= TARGETS.eventLoopP99Ms)} (${ms(r.driverEventLoopP99Ms)}) | ${(100 * r.eventLoopBusy).toFixed(0)}% · ${r.gcPauses.over10Ms} | ${ms(r.cpuMsPerRound)} | ${floor ? '—' : ms(r.storeMsPerEvent)} | ` +
        `${r.pgConnections ?? '—'} | ${kb(r.waitingBytesPerSession)}${mark(r.waitingBytesPerSession === null || r.waitingBytesPerSession <= TARGETS.waitingBytes)} | ${kb(r.runningBytesPerSession)} | ` +
        `${r.heapMbWaiting === null ? '—' : `${r.heapMbWaiting.toFixed(0)} MB`} | ${r.busyAnswers} | ${r.sessionsDone} | ${r.lost} |`,
    );
  }
  say(`targets (≤ 1,000 sessions): added p99 ≤ ${TARGETS.addedP99Ms} ms, event loop p99 ≤ ${TARGETS.eventLoopP99Ms} ms; a waiting session ≤ 20 KB (✗: missed)`);
  for (const line of floorRatios(runs)) say(line);
  say('added: at the user, end to end minus the model; in server: SessionHost.send minus its model calls; actions begun and ended in the window');
  say("loop busy: the share of the window the server's event loop ran code; GC pauses > 10 ms: the garbage collector's, in the window");
  if (runs.some((r) => r.store === 'floor'))
    say(
      'floor: the same users and model calls through a server with no store and no chart (floor-process.ts), run first: what this machine adds at that moment',
    );
  say('');
}

/**
 * Each Steward run's added p99 at the user against the floor's at the same size in this run
 * (the machine's share measured minutes apart, so the ratio holds where the milliseconds move).
 */
function floorRatios(runs: readonly OneServerFigures[]): string[] {
  const lines: string[] = [];
  for (const r of runs) {
    const floor = runs.find((f) => f.store === 'floor' && f.sessions === r.sessions);
    if (r.store === 'floor' || !floor || floor.addedMs.p99 <= 0) continue;
    const ratio = r.addedMs.p99 / floor.addedMs.p99;
    const target = FLOOR_RATIO_TARGETS[r.store];
    lines.push(
      `against the floor, ${r.store} · ${r.sessions} sessions: added p99 ${ms(r.addedMs.p99)} / ${ms(floor.addedMs.p99)} ms = ${ratio.toFixed(1)}× (target ≤ ${target}×${mark(r.sessions > 1000 || ratio <= target)})`,
    );
  }
  return lines;
}

export function printKills(k: KillFigures, say: (line: string) => void): void {
  say(`Three servers on PostgreSQL, ${k.kills} SIGKILLs (lease ${k.leaseMs} ms)`);
  say('| interrupted sessions | takeover p50 / p99 / max ms | not resumed | model calls made twice | on two servers at once | lost | actions |');
  say('|---|---|---|---|---|---|---|');
  say(
    `| ${k.interrupted} | ${ms(k.takeoverMs.p50)} / ${ms(k.takeoverMs.p99)}${mark(k.takeoverMs.p99 <= 2 * k.leaseMs)} / ${ms(k.takeoverMs.max)} | ${k.notResumed} | ${k.callsRunTwice} | ${k.overlaps} | ${k.lost} | ${k.actions} |`,
  );
  const t = k.split;
  say(
    `takeover split: kill → claimed p50 / p99 ${ms(t.untilClaimMs.p50)} / ${ms(t.untilClaimMs.p99)} ms · claimed → model call again ${ms(t.claimToCallMs.p50)} / ${ms(t.claimToCallMs.p99)} ms · ` +
      `claimed by the restarted server ${t.byRestarted.sessions} (→ call p99 ${ms(t.byRestarted.claimToCallP99Ms)} ms), by the two others ${t.bySurvivors.sessions} (p99 ${ms(t.bySurvivors.claimToCallP99Ms)} ms)` +
      (t.unseen > 0 ? ` · ${t.unseen} claim(s) not seen` : ''),
  );
  say(
    `leases a server lost while alive (renewals unconfirmed for 0.9 of a lease: it stopped the session, another server took it over): ${k.leasesLostLive} · ` +
      `renewals' round trip p50 / p99 / max ${ms(k.renewalMs.p50)} / ${ms(k.renewalMs.p99)} / ${ms(k.renewalMs.max)} ms (one due every ${ms(k.leaseMs / 3)} ms) · ` +
      `servers' event loop max ${ms(k.serverEventLoopMaxMs)} ms`,
  );
  say(`target: takeover p99 ≤ 2 × lease = ${2 * k.leaseMs} ms; a call interrupted by a kill is made again by the server that takes over (counted above)`);
  say('');
}

/** What makes the run fail: lost or doubled work, a stuck session, an error a user saw. */
export function problemsOf(runs: readonly OneServerFigures[], kills: KillFigures | null): string[] {
  const problems: string[] = [];
  for (const r of runs) {
    const where = `${r.store} ${r.sessions}`;
    if (r.lost > 0) problems.push(`${where}: ${r.lost} acknowledged action(s) missing from the journal`);
    if (r.overlaps > 0) problems.push(`${where}: ${r.overlaps} model call(s) of one session at once`);
    for (const f of r.failures) problems.push(`${where}: ${f}`);
    if (r.actions === 0) problems.push(`${where}: no action finished in the window`);
  }
  if (kills) {
    if (kills.lost > 0) problems.push(`kills: ${kills.lost} acknowledged action(s) missing from the journal`);
    if (kills.overlaps > 0) problems.push(`kills: ${kills.overlaps} time(s) one session had model calls open on two servers`);
    if (kills.notResumed > 0) problems.push(`kills: ${kills.notResumed} interrupted session(s) never ran again`);
    for (const f of kills.failures) problems.push(`kills: ${f}`);
  }
  return problems;
}
