/**
 * `npm run bench:load`: Steward as a deployment meets it — thousands of sessions whose
 * model takes 0.3–3 s, users who think between actions, several servers, and kills.
 *
 *   npm run bench:load                       # full: 100 / 1,000 / 5,000 sessions on SQLite and PostgreSQL, 20 kills (~8 min on 2 cores)
 *   npm run bench:load -- --quick            # correctness only (nothing lost, no double run), small and fast (CI: npm run test:bench)
 *   npm run bench:load -- --sizes 100,1000 --stores sqlite --kills 0
 *   npm run bench:load -- --json [PATH]      # also writes the figures (default bench/load-results.json)
 *   npm start / npm test in bench/load       # the same run; its checks and the --quick run (npm run test:bench)
 *   npm run bench:load -- --no-memory        # skip the memory phase (at the largest N: the window's sessions and up to --max-running more parked, then those running)
 *   npm run bench:load -- --max-running 300  # the server answers 429 + Retry-After beyond 300 running sessions (default: none up to 1,000 sessions, 300 above)
 *   npm run bench:load -- --keep-loaded 0    # the server keeps no session loaded while it waits (steward serve --keep-loaded; default its own)
 *   npm run bench:load -- --pg-socket        # PostgreSQL through its Unix socket, not 127.0.0.1 TCP
 *   npm run bench:load -- --model-in-driver  # the model server in the users' process, not its own (to compare)
 *   npm run bench:load -- --no-floor         # skip the floor: the same users and model calls through a server that is not Steward (floor-process.ts)
 *
 * Exits non-zero when an acknowledged action is missing from a journal, a session ran on
 * two servers at once, a killed server's session never ran again, or a user saw an error.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { startPostgres, type TestPostgres } from '../../test/support/postgres.js';
import { startLlmServer, type LlmOptions } from './llm-server.js';
import { startLlmProcess } from './llm-process.js';
import { compiledServers } from './servers.js';
import { ROOT } from './compile-server.js';
import { oneServer, type LoadSettings, type OneServerFigures, type ServerKind } from './one-server.js';
import { killRun, type KillFigures } from './kills.js';
import { seeded } from './numbers.js';
import { printKills, printRuns, problemsOf } from './report.js';
import { printStorePath, storePath, type StorePathFigures } from './store-path.js';

interface Args {
  quick: boolean;
  /** `steward serve --keep-loaded` of the servers; null: their default. */
  keepLoaded: number | null;
  sizes: number[];
  stores: Array<'sqlite' | 'postgres'>;
  kills: number;
  /** Where to write the figures as JSON, if anywhere. */
  json: string | null;
  memory: boolean;
  /**
   * The load server's `--max-running` (0: no limit); null: by size — none up to 1,000 sessions
   * (the targets' rows), 300 above, where this machine runs out and back-pressure keeps every
   * action from slowing down; quick: 8, so the 429 path is exercised.
   */
  maxRunning: number | null;
  /** Connect to PostgreSQL through its Unix socket instead of 127.0.0.1 TCP. */
  pgSocket: boolean;
  /** The model server in the driver's process (as before it had its own): to compare. */
  modelInDriver: boolean;
  /** Run the floor (floor-process.ts) at each size up to 1,000 before the stores: what the machine alone adds. */
  floor: boolean;
}

/** A new database, through the cluster's Unix socket when asked (and the bench started the cluster). */
async function postgresDatabase(postgres: TestPostgres, socket: boolean): Promise<string> {
  const url = await postgres.createDatabase();
  if (!socket) return url;
  const local = postgres.viaSocket(url);
  if (!local) throw new Error('--pg-socket needs the cluster the bench starts itself: unset STEWARD_TEST_PG.');
  return local;
}

function parseArgs(argv: string[]): Args {
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick');
  const sizes = (value('--sizes') ?? (quick ? '20' : '100,1000,5000')).split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes takes whole numbers ≥ 1, comma-separated (got ${value('--sizes')})`);
  const stores = (value('--stores') ?? 'sqlite,postgres').split(',') as Args['stores'];
  if (stores.some((s) => s !== 'sqlite' && s !== 'postgres')) throw new Error(`--stores takes sqlite, postgres or both (got ${value('--stores')})`);
  const kills = Number(value('--kills') ?? (quick ? 3 : 20));
  if (!Number.isInteger(kills) || kills < 0) throw new Error(`--kills takes a whole number ≥ 0 (got ${value('--kills')})`);
  // A path given is the caller's: `npm run bench:load` runs this in bench/load, npm's INIT_CWD is where it was typed.
  const path = value('--json')?.startsWith('--') === false ? resolve(process.env.INIT_CWD ?? '.', value('--json')!) : join(ROOT, 'bench/load-results.json');
  const json = argv.includes('--json') ? path : null;
  const given = value('--max-running') ?? (quick ? '8' : null);
  const maxRunning = given === null ? null : Number(given);
  if (maxRunning !== null && (!Number.isInteger(maxRunning) || maxRunning < 0))
    throw new Error(`--max-running takes a whole number ≥ 0, 0 for no limit (got ${value('--max-running')})`);
  const keepLoaded = value('--keep-loaded') === undefined ? null : Number(value('--keep-loaded'));
  if (keepLoaded !== null && (!Number.isInteger(keepLoaded) || keepLoaded < 0))
    throw new Error(`--keep-loaded takes a whole number ≥ 0, 0 for none (got ${value('--keep-loaded')})`);
  return {
    quick,
    sizes,
    keepLoaded,
    stores,
    kills,
    json,
    memory: !quick && !argv.includes('--no-memory'),
    maxRunning,
    pgSocket: argv.includes('--pg-socket'),
    modelInDriver: argv.includes('--model-in-driver'),
    floor: !argv.includes('--no-floor'),
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // Ctrl-C or a kill: leave through 'exit', whose handlers remove the compiled servers' folder
  // and stop the PostgreSQL cluster (the servers and the model server exit when the driver is gone).
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const random = seeded(42);
  const llm: LlmOptions = args.quick
    ? { minMs: 20, maxMs: 200, tokensPerSecond: 400, rate429: 0.05, retryAfterMs: 20, seed: 7 }
    : { minMs: 300, maxMs: 3000, tokensPerSecond: 80, rate429: 0.02, retryAfterMs: 250, seed: 7 };
  const startModel = args.modelInDriver ? startLlmServer : startLlmProcess;
  const { steward: startServer, floor: startFloor } = await compiledServers();
  const settings: LoadSettings = args.quick
    ? {
        rampMs: 1000,
        windowMs: 4000,
        thinkMinMs: 30,
        thinkMaxMs: 300,
        llm,
        startModel,
        startServer,
        startFloor,
        random,
        memory: false,
        maxRunning: 8,
        keepLoaded: args.keepLoaded,
        settle: true,
      }
    : {
        rampMs: 10_000,
        windowMs: 20_000,
        thinkMinMs: 2000,
        thinkMaxMs: 20_000,
        llm,
        startModel,
        startServer,
        startFloor,
        random,
        memory: args.memory,
        maxRunning: 0,
        keepLoaded: args.keepLoaded,
        settle: true,
      };
  const largest = Math.max(...args.sizes);
  // Memory per waiting session is measured once per store, at the largest N: it is the row
  // the targets (≤ 20 KB each, 5,000 under 256 MB) are about, and parking is slow.
  const settingsFor = (size: number, kind: ServerKind): LoadSettings => ({
    ...settings,
    // The floor holds no sessions: bytes per session are Steward's figure only.
    memory: settings.memory && size === largest && kind !== 'floor',
    maxRunning: args.maxRunning ?? (size > 1000 ? 300 : 0),
    // The latency targets are about up to 1,000 sessions; above, the server is full by design.
    settle: size <= 1000,
  });
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'cpu'}), ${(totalmem() / 2 ** 30).toFixed(0)} GB, node ${process.version}`;
  say(`Load benchmark${args.quick ? ' (quick: correctness only, times not meaningful)' : ''} on ${machine}`);
  say(
    `model: latency ${llm.minMs}–${llm.maxMs} ms (log-uniform), ${llm.tokensPerSecond} tokens/s, ${llm.rate429 * 100}% 429s, ${args.modelInDriver ? "in the users' process" : 'in its own process'}; ` +
      `think ${settings.thinkMinMs}–${settings.thinkMaxMs} ms; PostgreSQL over ${args.pgSocket ? 'its Unix socket' : '127.0.0.1 TCP'}`,
  );
  say(
    args.maxRunning === null
      ? 'one server: no --max-running up to 1,000 sessions, 300 above (sends beyond it answer 429 + Retry-After; the users wait it out)'
      : args.maxRunning > 0
        ? `one server: --max-running ${args.maxRunning} (sends beyond it answer 429 + Retry-After; the users wait it out)`
        : 'one server: no --max-running (every send is taken)',
  );

  const folder = mkdtempSync(join(tmpdir(), 'steward-load-'));
  let postgres: TestPostgres | null = null;
  const runs: OneServerFigures[] = [];
  let kills: KillFigures | null = null;
  let path: StorePathFigures[] = [];
  let marker = 0;
  try {
    if (args.stores.includes('postgres') || args.kills > 0) postgres = await startPostgres({ durable: true });
    if (args.stores.includes('postgres') && !args.quick) {
      say('  postgres · the store path of one send, two ways');
      path = await storePath(await postgres!.createDatabase());
    }
    // The floor first, at the sizes the latency targets are about (above, a server is full by
    // design and the figures are its 429s, not what the machine adds).
    const floorSizes = args.floor ? args.sizes.filter((size) => size <= 1000) : [];
    for (const store of [...(floorSizes.length > 0 ? (['floor'] as const) : []), ...args.stores]) {
      for (const size of store === 'floor' ? floorSizes : args.sizes) {
        const db = store === 'floor' ? null : store === 'sqlite' ? join(folder, `load-${size}.db`) : await postgresDatabase(postgres!, args.pgSocket);
        const began = performance.now();
        runs.push(await oneServer(store, db, size, marker, settingsFor(size, store), say));
        marker += 10_000_000;
        const last = runs.at(-1)!;
        say(
          `    ${last.actionsPerSecond.toFixed(1)} actions/s · added p99 ${last.addedMs.p99.toFixed(1)} ms (in server ${last.inServerMs.p99.toFixed(1)}) · ` +
            `event loop p99 ${last.eventLoopP99Ms.toFixed(1)} ms (driver ${last.driverEventLoopP99Ms.toFixed(1)})` +
            (last.settle
              ? ` · window from ${(last.settle.waitedMs / 1000).toFixed(1)} s after the ramp (accept queue up to ${last.settle.largest} till then, ${last.acceptQueueInWindow ?? 0} in the window)`
              : '') +
            `${last.requestTimeouts > 0 ? ` · ${last.requestTimeouts} 408s sent again` : ''}` +
            `${Object.entries(last.elsewhere)
              .map(([code, n]) => ` · ${n} ${code} waited out`)
              .join('')} · ${((performance.now() - began) / 1000).toFixed(0)} s`,
        );
        const q = (x: { p50: number; p99: number }) => `${x.p50.toFixed(0)} / ${x.p99.toFixed(0)}`;
        say(
          `    p50 / p99 ms: each action at the user ${q(last.endToEndMs)}, each send in the server ${q(last.sendWholeMs)}; ` +
            `model ms per action: ${last.modelMsPerAction.toFixed(0)} at the model server, ${last.modelAtServerMsPerAction.toFixed(0)} at Steward's client`,
        );
        const gc = last.gcPauses;
        say(
          `    the server's event loop: busy ${(100 * last.eventLoopBusy).toFixed(0)}% of the window; ` +
            `${gc.count} garbage-collection pauses, ${gc.ms.toFixed(0)} ms in all, ${gc.over10Ms} over 10 ms, the longest ${gc.maxMs.toFixed(1)} ms`,
        );
        if (last.pgDoing.length > 0) say(`    PostgreSQL connections: ${last.pgDoing.join(', ')}`);
        if (last.pgTransactionsPerSend !== null)
          say(`    PostgreSQL transactions per send: ${last.pgTransactionsPerSend.toFixed(1)} (each a round trip: the store's, the leases', the live events')`);
        if (last.storeMethods.length > 0) say(`    store time by method (mean / p99 ms × calls): ${last.storeMethods.join(', ')}`);
      }
    }
    if (args.kills > 0 && postgres) {
      kills = await killRun(
        await postgresDatabase(postgres, args.pgSocket),
        marker,
        args.quick
          ? { users: 12, kills: args.kills, leaseMs: 1000, everyMs: 2500, rampMs: 500, thinkMinMs: 50, thinkMaxMs: 300, llm, startModel, startServer, random }
          : {
              users: 150,
              kills: args.kills,
              leaseMs: 2000,
              everyMs: 4500,
              rampMs: 3000,
              thinkMinMs: 300,
              thinkMaxMs: 1500,
              llm,
              startModel,
              startServer,
              random,
            },
        say,
      );
    }
  } finally {
    await postgres?.stop();
    rmSync(folder, { recursive: true, force: true });
  }
  say('');
  printRuns(runs, say);
  if (path.length > 0) printStorePath(path, say);
  if (kills) printKills(kills, say);
  say(`load average at the end: ${loadavg()[0]!.toFixed(2)}`);
  if (args.json) writeFileSync(args.json, JSON.stringify({ machine, quick: args.quick, runs, kills, storePath: path }, null, 2));
  const problems = problemsOf(runs, kills);
  for (const problem of problems) say(`PROBLEM: ${problem}`);
  say(
    problems.length === 0
      ? 'correctness: nothing lost, no session on two servers at once, every killed session ran again'
      : `correctness: ${problems.length} problem(s)`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}

await main();
