// Entry point: node --expose-gc run.mjs
// Runs the same "burst" scenario against every variant in ONE process,
// alternating variants in small blocks, then prints a table + JSON summary.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { K, BURSTS, MAX_BURST, ROUNDS_PER_SESSION, answerFor, expectedToolResults, Recorder, setRecorder, now } from './scenario.mjs';
import * as xstate from './variants/xstate.mjs';
import * as langgraph from './variants/langgraph.mjs';
import * as agents from './variants/agents.mjs';
import * as steward from './variants/steward.mjs';
import * as chart from './variants/chart.mjs';
import * as stewardSqlite from './variants/steward_sqlite.mjs';
import * as xstateSqlite from './variants/xstate_sqlite.mjs';

if (typeof globalThis.gc !== 'function') throw new Error('run with: node --expose-gc run.mjs');
const env = (k, d) => Number(process.env[k] ?? d);
const SESSIONS = env('SESSIONS', 200); // measured sessions per variant per mode (hot, durable)
const WARMUP = env('WARMUP', 20); // discarded sessions per variant per mode
const BLOCK = env('BLOCK', 10); // sessions per variant before switching to the next one
const HEAP_N = env('HEAP_N', 1000); // paused sessions held for the heap measurement
const HEAP_REPS = env('HEAP_REPS', 3);
const ONLY = process.env.ONLY?.split(',');

const FACTORIES = {
  // xstate first: it is the ratio baseline
  xstate: () => xstate.create(),
  langgraph: () => langgraph.create(),
  langgraph_lean: () => langgraph.create({ lean: true }),
  agents: () => agents.create(),
  xstate_sqlite: () => xstateSqlite.create(), // the durable floor: the SQLite rows' baseline
  chart: () => chart.create(), // the session chart alone: the part of `steward` that is the chart's
  steward: () => steward.create(), // this checkout (STEWARD_DIR, default ../..)
  steward_sqlite: () => stewardSqlite.create(),
};
// EXTRA=path/to/adapter.mjs[,more.mjs]: add variants (same contract as variants/*.mjs) without editing this file.
// STEWARD_BEFORE=<checkout>: steward_before and chart_before rows from that checkout (variants/steward_before.mjs, chart_before.mjs).
const extras = [
  ...(process.env.STEWARD_BEFORE ? ['variants/steward_before.mjs', 'variants/chart_before.mjs'] : []),
  ...(process.env.EXTRA?.split(',').filter(Boolean) ?? []),
];
for (const path of extras) {
  const mod = await import(new URL(path, `file://${process.cwd()}/`).href);
  FACTORIES[mod.create().name] = () => mod.create();
}
const names = Object.keys(FACTORIES).filter((n) => !ONLY || ONLY.includes(n));
const inst = Object.fromEntries(names.map((n) => [n, FACTORIES[n]()]));
const gc = () => {
  globalThis.gc();
  globalThis.gc();
};
// Let pending jobs finish (WeakRef keep-alives, queued microtasks), then collect.
const settleAndGc = async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
};
const tStart = now();
const rotate = (arr, i) => arr.map((_, j) => arr[(i + j) % arr.length]);

// ---- one full session: start, BURSTS x (K loop rounds + ask_user pause + resume), final round
const EXPECTED = JSON.stringify(expectedToolResults());
async function session(v, sid, durable, S) {
  const rec = new Recorder();
  setRecorder(rec);
  const t0 = now();
  let h = await v.start(sid);
  let tPause = now();
  const cycles = [];
  let persistTotal = 0;
  for (let b = 0; b < BURSTS; b++) {
    if (h.done) throw new Error(`${v.name}: finished early`);
    let persist = 0;
    let load = 0;
    if (durable) {
      const a = now();
      const str = await v.serialize(h);
      const m = now();
      h = await v.restore(sid, str);
      const e = now();
      persist = m - a;
      load = e - m;
      persistTotal += persist + load;
    }
    const nBefore = rec.ticks.length;
    const tResume = now();
    h = await v.resume(h, answerFor(b));
    const tNext = now();
    const pauseHalf = tPause - rec.ticks[nBefore - 1]; // boundary model call -> caller sees the pause
    const resumeHalf = rec.ticks[nBefore] - tResume; // caller resumes -> next model call
    cycles.push({ pauseHalf, resumeHalf, persist, load, total: pauseHalf + resumeHalf + persist + load });
    tPause = tNext;
  }
  const tEnd = tPause;
  if (!h.done) throw new Error(`${v.name}: not finished`);
  if (rec.ticks.length !== ROUNDS_PER_SESSION) throw new Error(`${v.name}: ${rec.ticks.length} model calls`);
  const got = JSON.stringify(await v.toolResults(h));
  if (got !== EXPECTED) throw new Error(`${v.name}: wrong transcript ${got}`);
  await v.dispose(h);
  if (!S) return;
  for (let b = 0; b < BURSTS; b++) {
    // K loop-round intervals inside each burst
    const base = b * (K + 1);
    for (let i = 0; i < K; i++) {
      const d = rec.ticks[base + i + 1] - rec.ticks[base + i];
      S.round.push(d);
      S.roundByBurst[b].push(d);
    }
  }
  for (const c of cycles) {
    S.cycle.push(c.total);
    S.pauseHalf.push(c.pauseHalf);
    S.resumeHalf.push(c.resumeHalf);
    if (durable) {
      S.persist.push(c.persist);
      S.load.push(c.load);
    }
  }
  S.startToFirstCall.push(rec.ticks[0] - t0);
  S.sessionPerRound.push((tEnd - t0 - persistTotal) / ROUNDS_PER_SESSION);
}

const newSamples = () => ({
  round: [],
  roundByBurst: Array.from({ length: BURSTS }, () => []),
  cycle: [],
  pauseHalf: [],
  resumeHalf: [],
  persist: [],
  load: [],
  startToFirstCall: [],
  sessionPerRound: [],
  wallMs: 0,
  cpuMs: 0,
  sessions: 0,
});
const samples = Object.fromEntries(names.map((n) => [n, { hot: newSamples(), durable: newSamples() }]));
let seq = 0;

// ---- phase 1: latency (warm-up, then alternating blocks)
for (const n of names)
  for (const durable of [false, true]) {
    for (let i = 0; i < WARMUP; i++) await session(inst[n], `w-${seq++}`, durable, null);
  }
for (let blk = 0; blk * BLOCK < SESSIONS; blk++) {
  for (const n of rotate(names, blk)) {
    for (const durable of [false, true]) {
      const S = samples[n][durable ? 'durable' : 'hot'];
      gc(); // start every block from a clean heap so nobody pays for another's garbage
      const c0 = process.cpuUsage();
      const t0 = now();
      for (let i = 0; i < Math.min(BLOCK, SESSIONS - blk * BLOCK); i++, S.sessions++) {
        await session(inst[n], `s-${seq++}`, durable, S);
      }
      const c = process.cpuUsage(c0);
      S.wallMs += now() - t0;
      S.cpuMs += (c.user + c.system) / 1000;
    }
  }
}

// ---- phase 2: persisted state size of one paused session, at each of the BURSTS pauses
const persisted = {};
for (const n of names) {
  const v = inst[n];
  setRecorder(new Recorder());
  const sid = `p-${seq++}`;
  let h = await v.start(sid);
  const atPause = [];
  for (let b = 0; b < BURSTS; b++) {
    atPause.push(await v.persistedBytes(h));
    h = await v.resume(h, answerFor(b));
  }
  await v.dispose(h);
  persisted[n] = atPause;
}

// ---- phase 3: retained memory per paused session (HEAP_N sessions paused at their first ask_user)
// In its own function so that nothing of one measurement stays in a live frame
// (module top-level locals stay reachable) and inflates the baseline of the next.
async function retainedPerSession(factory, tag) {
  const v = factory(); // fresh instance (LangGraph: fresh, empty MemorySaver)
  setRecorder(null);
  await settleAndGc();
  const m0 = process.memoryUsage();
  const held = [];
  for (let i = 0; i < HEAP_N; i++) held.push(await v.start(`${tag}-${i}`));
  // Pin the handles AND the instance (LangGraph's paused state lives in v's saver):
  // otherwise V8 may treat them as dead after their last use.
  globalThis.__benchKeep = { v, held };
  await settleAndGc();
  const m1 = process.memoryUsage();
  globalThis.__benchKeep = null;
  return {
    heap: (m1.heapUsed - m0.heapUsed) / HEAP_N,
    external: (m1.external - m0.external) / HEAP_N, // ArrayBuffers etc. (LangGraph stores Uint8Array checkpoints)
  };
}
const heap = Object.fromEntries(names.map((n) => [n, []]));
for (let rep = 0; rep < HEAP_REPS; rep++) {
  for (const n of rotate(names, rep)) heap[n].push(await retainedPerSession(FACTORIES[n], `h-${rep}`));
}

// ---- report
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
};
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length ? (s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2) : NaN;
};
const us = (ms) => Math.round(ms * 1000 * 10) / 10;
const stat = (xs) => ({ median_us: us(med(xs)), p90_us: us(pct(xs, 0.9)), n: xs.length });
const pkg = (p) => JSON.parse(readFileSync(new URL(`./node_modules/${p}/package.json`, import.meta.url))).version;

const summary = {
  scenario: { K, BURSTS, MAX_BURST, ROUNDS_PER_SESSION, SESSIONS, WARMUP, BLOCK, HEAP_N, HEAP_REPS },
  env: { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: os.cpus().length, totalSeconds: Math.round((now() - tStart) / 1000) },
  versions: Object.fromEntries(
    [
      'xstate',
      '@langchain/langgraph',
      '@langchain/langgraph-checkpoint',
      '@langchain/core',
      'langsmith',
      '@openai/agents',
      '@openai/agents-core',
      'openai',
      'zod',
    ].map((p) => [p, pkg(p)]),
  ),
  results: {},
};
for (const n of names) {
  const { hot, durable } = samples[n];
  const hp = heap[n].map((x) => x.heap + x.external);
  summary.results[n] = {
    round: stat([...hot.round, ...durable.round]),
    roundByBurst: hot.roundByBurst.map((xs, b) => stat([...xs, ...durable.roundByBurst[b]])),
    pauseResume_hot: stat(hot.cycle),
    pauseResume_hot_parts: { pauseHalf: stat(hot.pauseHalf), resumeHalf: stat(hot.resumeHalf) },
    pauseResume_durable: stat(durable.cycle),
    pauseResume_durable_parts: { serialize: stat(durable.persist), restore: stat(durable.load) },
    startToFirstModelCall: stat([...hot.startToFirstCall, ...durable.startToFirstCall]),
    sessionWallPerRound_hot: stat(hot.sessionPerRound),
    // process CPU time / wall time over the hot measured blocks (includes GC threads);
    // ~1 or more means CPU-bound, well below 1 would mean idle waiting (timers, I/O).
    cpuOverWall_hot: Math.round((hot.cpuMs / hot.wallMs) * 100) / 100,
    retainedPerPausedSession_bytes: { median: Math.round(med(hp)), reps: heap[n].map((x) => ({ heap: Math.round(x.heap), external: Math.round(x.external) })) },
    persistedState_bytes: { atPause1: persisted[n][0].bytes, perPause: persisted[n] },
  };
}

const R = summary.results;
const base = R.xstate;
const ratio = (a, b) => (b ? `${(a / b).toFixed(2)}x` : '-');
const rows = names.map((n) => {
  const r = R[n];
  const cell = (v, b) => `${v}${base && n !== 'xstate' ? ` (${ratio(v, b)})` : ''}`;
  return [
    n,
    cell(r.round.median_us, base?.round.median_us),
    cell(r.pauseResume_hot.median_us, base?.pauseResume_hot.median_us),
    cell(r.pauseResume_durable.median_us, base?.pauseResume_durable.median_us),
    cell(r.sessionWallPerRound_hot.median_us, base?.sessionWallPerRound_hot.median_us),
    cell(r.retainedPerPausedSession_bytes.median, base?.retainedPerPausedSession_bytes.median),
    cell(r.persistedState_bytes.atPause1, base?.persistedState_bytes.atPause1),
  ];
});
const head = [
  'variant',
  'LLM round µs',
  'pause+resume hot µs',
  'pause+resume durable µs',
  'session wall / round µs',
  'retained B / paused session',
  'persisted B (1st pause)',
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
console.log(
  `\nburst benchmark: K=${K} loop rounds + 1 ask_user per burst, ${BURSTS} bursts/session, ${SESSIONS} sessions x {hot, durable} per variant; medians, (ratio vs xstate)\n`,
);
console.log(line(head));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const r of rows) console.log(line(r));
// A durable runtime's SQLite row against the durable floor's (bare XState committing each change to SQLite).
const floor = R.xstate_sqlite;
for (const n of names.filter((v) => floor && v !== 'xstate_sqlite' && v.endsWith('_sqlite'))) {
  const r = R[n];
  console.log(
    `\n${n} against the durable floor (xstate_sqlite): LLM round ${ratio(r.round.median_us, floor.round.median_us)}, ` +
      `pause+resume durable ${ratio(r.pauseResume_durable.median_us, floor.pauseResume_durable.median_us)}, ` +
      `pause+resume hot ${ratio(r.pauseResume_hot.median_us, floor.pauseResume_hot.median_us)}`,
  );
}
console.log('\nJSON summary:');
console.log(JSON.stringify(summary, null, 2));
