/**
 * `npm run bench`: the burst workflow of SCENARIO.md (/work/shared/bench/SCENARIO.md) on
 * Steward and on a bare XState v5 baseline, in one process, alternating in blocks.
 *
 *   node --expose-gc --import tsx bench/run.ts [--quick] [--json [path]] [--sessions N] [--block N]
 *
 * --quick       a short smoke run (20 sessions per mode), for test/bench/bench.test.ts
 * --json [PATH] also write the figures as JSON (default bench/results.json)
 * --sessions N  recorded sessions per mode (default 240; at least 200 for real figures)
 * --block N     sessions per mode and block (default 10)
 * --modes a,b   only the timing loop, on these modes (for investigating; no table)
 * --growth      only the growth section (one session of 60 bursts, bench/growth.ts)
 * --compare PATH  also print the ratios beside those of an earlier run's JSON (e.g. of the commit before a change)
 *
 * Progress goes to stderr; the table to stdout. Every session's transcript is checked
 * (bench/scenario.ts): a wrong one stops the run with a non-zero exit code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryStore, SqliteStore } from '../src/index.js';
import { durabilityFromEnv } from '../src/store/session-store.js';
import { answer, createBaselineMachine, runBaselineSession, startBaseline, type BaselineActor } from './baseline.js';
import { FakeModel } from './fake-model.js';
import { buildFigures, MODES, type Measured, type Mode } from './figures.js';
import { freedPerSession, retainedPerSession, settle } from './memory.js';
import { formatTable, ratioOf, writeJson } from './report.js';
import { BURSTS, CALLS_PER_SESSION, FIRST_INPUT, K, MAX_BURST } from './scenario.js';
import { JOURNAL_PER_SESSION, runStewardSession, startStewardSession, StewardHarness } from './steward.js';
import { median, ModeSamples, summarize, type SessionSamples } from './stats.js';
import { storeFigures } from './store-bench.js';
import { formatPostgres, postgresFigures } from './postgres-bench.js';
import { formatGrowth, growthFigures } from './growth.js';
import { chartInput, chartMachine, runChartSession, runListenedSession } from './parts.js';
import { formatComparison, formatParts, partFigures, readEarlierRun } from './parts-report.js';

interface Config {
  quick: boolean;
  sessions: number;
  warmup: number;
  block: number;
  retained: number;
  retainedReps: number;
  liveSessions: number;
  storeIterations: number;
  journalEntries: number;
  json: string | undefined;
  /** An earlier run's JSON (--json) to print the ratios beside (--compare). */
  compare: string | undefined;
  modes: Mode[];
  /** Only the timing loop (--modes): for investigating. */
  timingOnly: boolean;
  /** Only the growth section (--growth). */
  growthOnly: boolean;
  growth: { sessions: number; held: number; warm: number; resumes: number };
}

const positive = (flag: string, value: string | undefined): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a whole number ≥ 1 (got ${value})`);
  return n;
};

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const common = { quick, journalEntries: 1000, json: undefined, compare: undefined, modes: [...MODES], timingOnly: false, growthOnly: false };
  const config: Config = quick
    ? {
        ...common,
        sessions: 20,
        warmup: 5,
        block: 5,
        retained: 100,
        retainedReps: 1,
        liveSessions: 20,
        storeIterations: 30,
        // A check that every figure is produced: its retained bytes per session are not meaningful.
        growth: { sessions: 1, held: 2, warm: 1, resumes: 5 },
      }
    : {
        ...common,
        sessions: 240,
        warmup: 30,
        block: 10,
        retained: 1000,
        retainedReps: 3,
        liveSessions: 200,
        storeIterations: 300,
        growth: { sessions: 10, held: 50, warm: 3, resumes: 25 },
      };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') continue;
    if (arg === '--growth') {
      config.growthOnly = true;
      continue;
    }
    if (arg === '--json') {
      const next = argv[i + 1];
      config.json = next && !next.startsWith('--') ? (i++, next) : fileURLToPath(new URL('./results.json', import.meta.url));
    } else if (arg === '--compare') {
      const next = argv[++i];
      if (!next || next.startsWith('--')) throw new Error("--compare needs the path of an earlier run's JSON (written with --json)");
      config.compare = next;
    } else if (arg === '--sessions') {
      config.sessions = positive(arg, argv[++i]);
    } else if (arg === '--block') {
      config.block = positive(arg, argv[++i]);
    } else if (arg === '--modes') {
      const modes = (argv[++i] ?? '').split(',') as Mode[];
      if (modes.some((m) => !MODES.includes(m))) throw new Error(`--modes takes a comma-separated subset of ${MODES.join(',')} (got ${argv[i]})`);
      config.modes = modes;
      config.timingOnly = true;
    } else {
      throw new Error(`Unknown option ${arg}. Options: --quick, --json [path], --sessions N, --block N, --modes a,b, --growth, --compare PATH.`);
    }
  }
  config.sessions = Math.ceil(config.sessions / config.block) * config.block;
  return config;
}

const started = performance.now();
const progress = (message: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(5)}s] ${message}\n`);
const us = (ms: number) => ms * 1000;

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('Run with node --expose-gc (npm run bench does).');
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  progress(
    `${config.quick ? 'quick run' : 'full run'}: ${config.sessions} recorded sessions per mode after ${config.warmup} warm-up, blocks of ${config.block}; modes ${config.modes.join(', ')}; SQLite in ${dir}`,
  );

  const model = new FakeModel();
  const machine = createBaselineMachine(model);
  // STEWARD_DURABILITY=every-event measures an fsync per event (default: per acknowledgement).
  const sqlite = new SqliteStore(join(dir, 'sessions.db'), { durability: durabilityFromEnv() });
  const harness = {
    hot: new StewardHarness(model, 'hot', undefined),
    memory: new StewardHarness(model, 'memory', new MemoryStore()),
    sqlite: new StewardHarness(model, 'sqlite', sqlite),
  };
  const bareChart = chartMachine(model, 'bare');
  const turnsChart = chartMachine(model, 'turns');
  const input = await chartInput(harness.hot);
  let counter = 0;
  const run: Record<Mode, () => Promise<SessionSamples>> = {
    'baseline-hot': () => runBaselineSession(model, machine, false),
    'baseline-durable': () => runBaselineSession(model, machine, true),
    'steward-hot': () => runStewardSession(harness.hot, `hot_${++counter}`),
    'steward-memory': () => runStewardSession(harness.memory, `mem_${++counter}`, { checkJournal: true }),
    'steward-sqlite': () => runStewardSession(harness.sqlite, `sql_${++counter}`, { checkJournal: true }),
    'chart-bare': () => runChartSession(model, bareChart, input, `bare_${++counter}`),
    'chart-turns': () => runChartSession(model, turnsChart, input, `turns_${++counter}`),
    'steward-listened': () => runListenedSession(harness.hot, `listened_${++counter}`),
  };
  const samples = Object.fromEntries(MODES.map((m) => [m, new ModeSamples()])) as Record<Mode, ModeSamples>;

  try {
    if (config.growthOnly) {
      const growth = await growthFigures({ dir, ...config.growth, progress });
      process.stdout.write(`\n${formatGrowth(growth)}\n`);
      if (config.json) writeJson(config.json, { growth });
      return;
    }
    // ── 1, 2: rounds and pause/resume, alternating in blocks ──
    const warmBlocks = Math.ceil(config.warmup / config.block);
    const blocks = config.sessions / config.block;
    const modes = config.modes;
    for (let b = 0; b < warmBlocks + blocks; b++) {
      const recording = b >= warmBlocks;
      const shift = b % modes.length;
      const order = [...modes.slice(shift), ...modes.slice(0, shift)];
      const t0 = performance.now();
      for (const mode of order) {
        // Outside the timed windows: fresh runtimes (runtime.live keeps every session it
        // opened) and a fresh MemoryStore (it keeps every session too), so the heap does not
        // grow over the run. No forced gc() here: full collections between blocks made V8
        // drop and recompile code (bytecode flushing), which slowed the mode that ran next.
        harness.memory.renew(new MemoryStore());
        harness.sqlite.renew();
        for (let i = 0; i < config.block; i++) {
          const s = await run[mode]();
          if (recording) samples[mode].add(s);
        }
      }
      const what = recording ? `block ${b - warmBlocks + 1}/${blocks}` : `warm-up block ${b + 1}/${warmBlocks}`;
      const both = samples['steward-hot'].rounds.length && samples['baseline-hot'].rounds.length;
      const hot = both
        ? ` · running medians: round ${us(median(samples['steward-hot'].rounds)).toFixed(1)} µs vs ${us(median(samples['baseline-hot'].rounds)).toFixed(1)} µs`
        : '';
      progress(`${what} (${config.block} sessions × ${modes.length} modes, ${((performance.now() - t0) / 1000).toFixed(1)} s)${hot}`);
    }

    if (config.timingOnly) {
      for (const mode of modes) {
        const s = samples[mode];
        const f = (values: number[]) => `${us(median(values)).toFixed(1)} µs`;
        process.stdout.write(
          `${mode.padEnd(17)} round ${f(s.rounds)}  burst ${f(s.burst)}  pause ${f(s.pause)}  resume ${f(s.resume)}  session ${f(s.session)}\n`,
        );
      }
      return;
    }

    // ── 3: retained bytes per waiting session (alternating, median of the reps) ──
    const retained = { steward: [] as number[], baseline: [] as number[] };
    for (let rep = 0; rep < config.retainedReps; rep++) {
      progress(`retained bytes, rep ${rep + 1}/${config.retainedReps}: ${config.retained} sessions to their first wait, each`);
      retained.baseline.push(
        await retainedPerSession(config.retained, async () => {
          model.begin();
          const actor: BaselineActor = startBaseline(machine);
          await answer(actor, FIRST_INPUT);
          return actor;
        }),
      );
      let n = 0;
      retained.steward.push(await retainedPerSession(config.retained, () => startStewardSession(harness.hot, `kept_${rep}_${++n}`)));
    }
    // runtime.live keeps finished sessions: what a runtime frees when it is dropped.
    progress(`bytes kept by runtime.live per finished session (${config.liveSessions} sessions)`);
    const liveStore = new MemoryStore();
    const liveHarness = new StewardHarness(model, 'memory', liveStore);
    for (let i = 0; i < config.liveSessions; i++) await runStewardSession(liveHarness, `live_${i}`);
    const live = {
      size: liveHarness.runtime.live.size,
      sessions: config.liveSessions,
      perSession: await freedPerSession(config.liveSessions, () => liveHarness.renew()),
    };

    // ── 4: persisted bytes at the first wait ──
    const first = await startStewardSession(harness.hot, 'persisted_bytes');
    const stewardPersisted = Buffer.byteLength(JSON.stringify(first.persisted()));
    first.stop();
    model.begin();
    const baseFirst = startBaseline(machine);
    await answer(baseFirst, FIRST_INPUT);
    const baselinePersisted = Buffer.byteLength(JSON.stringify(baseFirst.getPersistedSnapshot()));
    baseFirst.stop();

    // ── 5: durable store ──
    await settle();
    const store = await storeFigures({ model, machine, dir, iterations: config.storeIterations, journalEntries: config.journalEntries, progress });

    // ── 6: growth in session length ──
    await settle();
    const growth = await growthFigures({ dir, ...config.growth, progress });

    const measured: Measured = { samples, retained, live, persistedBytes: { steward: stewardPersisted, baseline: baselinePersisted }, store };
    const figures = buildFigures(measured);
    process.stdout.write(`\nSteward vs bare XState v5 — burst workflow, K=${K}, ${BURSTS} bursts, ${CALLS_PER_SESSION} calls/session, maxBurst ${MAX_BURST}\n`);
    process.stdout.write(
      `${samples['steward-hot'].sessions} recorded sessions per mode (after ${warmBlocks * config.block} warm-up), blocks of ${config.block}; node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n\n`,
    );
    process.stdout.write(`${formatTable(figures)}\n`);
    const parts = partFigures(samples);
    process.stdout.write(`\n${formatParts(parts)}\n`);
    if (config.compare) process.stdout.write(`\n${formatComparison(readEarlierRun(config.compare), { figures, parts })}\n`);
    process.stdout.write(`\n${formatGrowth(growth)}\n`);

    // ── PostgreSQL beside SQLite, and serve throughput (bench/postgres-bench.ts) ──
    const pg = await postgresFigures({
      model,
      iterations: config.storeIterations,
      journalEntries: config.journalEntries,
      sessions: config.quick ? 10 : 60,
      throughputSessions: config.quick ? 12 : 60,
      progress,
    });
    if (pg)
      process.stdout.write(
        formatPostgres(pg, {
          append: store.sqliteAppendDurable.median,
          resumeLong: store.resumeLong.median,
          pauseResume: median(samples['steward-sqlite'].pauseResume),
        }),
      );

    if (config.json) {
      const us3 = (values: number[]) => {
        const x = summarize(values);
        return { median: us(x.median), p10: us(x.p10), p90: us(x.p90), n: x.n };
      };
      writeJson(config.json, {
        scenario: { K, bursts: BURSTS, callsPerSession: CALLS_PER_SESSION, maxBurst: MAX_BURST, journalPerSession: JOURNAL_PER_SESSION },
        run: {
          date: new Date().toISOString(),
          node: process.version,
          cpus: cpus().length,
          cpu: cpus()[0]?.model,
          loadavg: loadavg(),
          quick: config.quick,
          sessionsPerMode: samples['steward-hot'].sessions,
          warmup: warmBlocks * config.block,
          block: config.block,
          seconds: (performance.now() - started) / 1000,
        },
        figures: figures.map((f) => ({ ...f, label: f.label.trim(), ratio: ratioOf(f) })),
        parts,
        modes: Object.fromEntries(
          MODES.map((mode) => {
            const s = samples[mode];
            return [
              mode,
              {
                sessions: s.sessions,
                round: us3(s.rounds),
                roundByBurst: s.roundsByBurst.map(us3),
                burst: us3(s.burst),
                pause: us3(s.pause),
                resume: us3(s.resume),
                pauseResume: us3(s.pauseResume),
                session: us3(s.session),
              },
            ];
          }),
        ),
        retained: { ...retained, sessions: config.retained },
        growth,
        store: Object.fromEntries(
          Object.entries(store).map(([k, v]) => [k, typeof v === 'number' ? v : { median: us(v.median), p10: us(v.p10), p90: us(v.p90), n: v.n }]),
        ),
        postgres: pg,
      });
      process.stdout.write(`\nJSON: ${config.json}\n`);
    }
    progress(`done (model calls: ${model.totalCalls})`);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
