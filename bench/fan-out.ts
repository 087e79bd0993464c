/**
 * `npm run bench:fan-out`: what a fan-out of independent workers saves, and what a session
 * waiting in its review costs (bench/README.md, "Fan-out").
 *
 *   node --expose-gc --import tsx bench/fan-out.ts [--sessions N] [--latency MS] [--memory N] [--json PATH]
 *
 * Time: sessions on the bundled research-brief package (three researchers that read only the
 * request, then a writer) through the load bench's model server (bench/load/llm-server.ts,
 * every call a fixed latency, the demo model deciding what it says), a user who says yes at
 * once. A phase runs from the wait that shows the manager's proposal (the reply is in) to the
 * review wait of its artifacts: one worker; three independent workers proposed in one reply
 * (a fan-out); three proposed one per reply (the demo with fan-outs off), whose sum of worker
 * phases and whole span (with the manager's rounds between them) are printed. Both modes run
 * at once, each on a model server of its own (the latency is fixed, so they do not slow each
 * other down beyond Steward's own CPU share, which the phases include).
 *
 * Memory: N sessions kept live (figure 3's method, bench/memory.ts) at the first approval and in
 * a fan-out review with three artifacts, on the in-process demo model (how fast they get there
 * is not measured), and the bytes one such session persists (what a store holds for it while
 * `steward serve` holds none of it: serve keeps a session in memory only during a send).
 * The default N (500) keeps the run under a minute; `--memory 5000` measures the 5,000 of the
 * scale targets (some 3 minutes on 2 busy cores).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import * as z from 'zod';
import { createRuntime, OpenAIModel } from '../src/index.js';
import { DemoModel } from '../src/models/demo-model.js';
import type { Session } from '../src/runtime/session.js';
import type { SessionView } from '../src/core/view.js';
import { sayYes } from '../test/support/demo-autopilot.js';
import { startLlmServer, type LlmServer } from './load/llm-server.js';
import { TARGETS } from './load/report.js';
import { heapPlusExternal, retainedPerSession, settle } from './memory.js';
import { median } from './stats.js';

const PACKAGE_ID = 'research-brief';
const REQUEST = 'Should a small team move its internal service from REST to gRPC?';
const RESEARCHERS = 3;
/** The load bench's scale targets: a waiting session ≤ TARGETS.waitingBytes; 5,000 waiting within 256 MB of heap (bench/load/run.ts). */
const TARGET_HEAP_BYTES = 256 * 1024 * 1024;
/** The bound: three independent workers take at most this many times one worker's time. */
const TARGET_RATIO = 1.3;

const Options = z.strictObject({
  sessions: z.coerce.number().int().min(1).max(50).default(3),
  latency: z.coerce.number().int().min(1).max(10_000).default(2000),
  memory: z.coerce.number().int().min(0).max(20_000).default(500),
  json: z.string().min(1).optional(),
});
type Options = z.infer<typeof Options>;

/** `--name value` pairs into Options; an unknown name or a bad value names the fix. */
function parseOptions(argv: string[]): Options {
  const raw: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!;
    if (!name.startsWith('--') || argv[i + 1] === undefined)
      throw new Error(`Options come as --name value (got "${name}"). Options: --sessions N, --latency MS, --memory N, --json PATH.`);
    raw[name.slice(2)] = argv[i + 1]!;
  }
  const parsed = Options.safeParse(raw);
  if (!parsed.success)
    throw new Error(`Bad option: ${z.prettifyError(parsed.error)}. Options: --sessions 1–50, --latency 1–10000, --memory 0–20000, --json PATH.`);
  return parsed.data;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const progress = (message: string) => process.stderr.write(`[fan-out ${(performance.now() / 1000).toFixed(1).padStart(5)}s] ${message}\n`);

type Seen = { view: SessionView; at: number }[];

const isProposal = (v: SessionView) => v.waitingReason === 'approve_step' && (v.team?.some((t) => t.status === 'proposed') || v.pendingStep !== undefined);
const isReview = (v: SessionView) => v.waitingReason === 'review_artifact';
/** The review wait of the three researchers' artifacts (the third alone, or all three in a fan-in): the bench stops there. */
const researchersInReview = (v: SessionView) => isReview(v) && v.artifacts.length >= RESEARCHERS;

/** Each proposal → the review wait that follows it, in ms, with how many workers it ran. */
function phases(seen: Seen): { workers: number; ms: number; start: number; end: number }[] {
  const found = [];
  for (let i = 0; i < seen.length; i++) {
    if (!isProposal(seen[i]!.view) || (i > 0 && isProposal(seen[i - 1]!.view))) continue;
    const review = seen.slice(i + 1).find((s) => isReview(s.view));
    if (!review) continue;
    const workers = seen[i]!.view.team?.length ?? 1;
    found.push({ workers, ms: review.at - seen[i]!.at, start: seen[i]!.at, end: review.at });
  }
  return found;
}

interface TimeFigures {
  oneWorkerMs: number[];
  fanOutMs: number[];
  sequentialWorkersMs: number[];
  sequentialSpanMs: number[];
  load: { before: string; after: string };
}

/** The sessions of one mode at once; each stops at the review wait of its third researcher's artifact (the writer is not run). */
async function runMode(llm: LlmServer, sessions: number): Promise<Seen[]> {
  const runtime = createRuntime({ model: new OpenAIModel({ model: 'demo', baseURL: llm.baseURL, apiKey: 'bench', maxRetries: 0 }) });
  const one = async () => {
    const session = await runtime.createSession({ packageId: PACKAGE_ID });
    return sayYes(session, REQUEST, researchersInReview);
  };
  return Promise.all(Array.from({ length: sessions }, one));
}

async function timeFigures(options: Options): Promise<TimeFigures> {
  const llm = (fanOut: boolean) =>
    startLlmServer({ minMs: options.latency, maxMs: options.latency, tokensPerSecond: 10_000, rate429: 0, retryAfterMs: 0, seed: 1, fanOut });
  const before = load();
  const [sequential, fanned] = await Promise.all([llm(false), llm(true)]);
  try {
    progress(
      `${options.sessions} session(s) with one worker per reply, as many with the three researchers in one reply (model latency ${options.latency} ms)…`,
    );
    const [seq, fan] = await Promise.all([runMode(sequential, options.sessions), runMode(fanned, options.sessions)]);
    const seqPhases = seq.map(phases);
    for (const p of seqPhases)
      if (p.length < RESEARCHERS || p.some((x) => x.workers !== 1)) throw new Error(`expected ${RESEARCHERS} one-worker phases, got ${JSON.stringify(p)}`);
    const fanPhases = fan.map(phases);
    for (const p of fanPhases) if (p[0]?.workers !== RESEARCHERS) throw new Error(`expected a fan-out of ${RESEARCHERS} first, got ${JSON.stringify(p)}`);
    return {
      oneWorkerMs: seqPhases.flatMap((p) => p.slice(0, RESEARCHERS).map((x) => x.ms)),
      fanOutMs: fanPhases.map((p) => p[0]!.ms),
      sequentialWorkersMs: seqPhases.map((p) => p.slice(0, RESEARCHERS).reduce((sum, x) => sum + x.ms, 0)),
      sequentialSpanMs: seqPhases.map((p) => p[RESEARCHERS - 1]!.end - p[0]!.start),
      load: { before, after: load() },
    };
  } finally {
    await Promise.all([sequential.close(), fanned.close()]);
  }
}

interface MemoryFigures {
  sessions: number;
  firstApprovalBytes: number;
  /** The review of one worker's artifact (the first, with fan-outs off). */
  oneReviewBytes: number;
  fanOutReviewBytes: number;
  /** `session.persisted()` as JSON, one session at each wait. */
  persistedFirstApprovalBytes: number;
  persistedOneReviewBytes: number;
  persistedFanOutReviewBytes: number;
  /** heapUsed + external with the fan-out cohort kept. */
  heapWithFanOutBytes: number;
  load: string;
}

/** n sessions kept at the wait `stop` names, on a runtime of their own: bytes retained per session, and the heap with them. */
async function cohort(n: number, fanOut: boolean, stop: (v: SessionView) => boolean): Promise<{ perSession: number; heap: number; persisted: number }> {
  const runtime = createRuntime({ model: new DemoModel({ fanOut }) });
  let last: Session | undefined;
  const perSession = await retainedPerSession(n, async () => {
    const session: Session = await runtime.createSession({ packageId: PACKAGE_ID });
    const seen = await sayYes(session, REQUEST, stop);
    if (!stop(seen.at(-1)!.view)) throw new Error('a session ended before its wait');
    last = session;
    return session;
  });
  // The runtime still holds the sessions it opened: the heap with all n of them.
  await settle();
  const heap = heapPlusExternal();
  return { perSession, heap, persisted: Buffer.byteLength(JSON.stringify(last!.persisted())) };
}

async function memoryFigures(n: number): Promise<MemoryFigures> {
  progress(`${n} sessions kept at their first approval…`);
  const first = await cohort(n, false, (v) => v.waitingReason === 'approve_step');
  progress(`${n} sessions kept in the review of one artifact…`);
  const one = await cohort(n, false, isReview);
  progress(`${n} sessions kept in a fan-out review of ${RESEARCHERS} artifacts…`);
  const fanIn = await cohort(n, true, (v) => researchersInReview(v) && (v.team?.filter((t) => t.status === 'submitted').length ?? 0) === RESEARCHERS);
  return {
    sessions: n,
    firstApprovalBytes: first.perSession,
    oneReviewBytes: one.perSession,
    fanOutReviewBytes: fanIn.perSession,
    persistedFirstApprovalBytes: first.persisted,
    persistedOneReviewBytes: one.persisted,
    persistedFanOutReviewBytes: fanIn.persisted,
    heapWithFanOutBytes: fanIn.heap,
    load: load(),
  };
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const mark = (ok: boolean) => (ok ? '✓' : '✗');

function report(options: Options, time: TimeFigures, memory: MemoryFigures | null): string {
  const one = median(time.oneWorkerMs);
  const fan = median(time.fanOutMs);
  const seq = median(time.sequentialWorkersMs);
  const lines = [
    `fan-out bench · ${cpus().length} cores · node ${process.version} · model latency ${options.latency} ms · ${options.sessions} session(s) per mode`,
    '',
    `time, proposal → review wait (median; load ${time.load.before} → ${time.load.after})`,
    `  1 worker                         ${s(one)}`,
    `  3 independent, one reply         ${s(fan)}   ratio to 1 worker ${(fan / one).toFixed(2)}× (≤ ${TARGET_RATIO}×) ${mark(fan / one <= TARGET_RATIO)}`,
    `  3 sequential, one per reply      ${s(seq)}   ratio ${(seq / one).toFixed(2)}× (worker phases only; the whole span with the manager's rounds and reviews: ${s(median(time.sequentialSpanMs))})`,
  ];
  if (memory) {
    const perOk = memory.fanOutReviewBytes <= TARGETS.waitingBytes;
    const heapOk = memory.heapWithFanOutBytes <= TARGET_HEAP_BYTES;
    const at5000 = (memory.fanOutReviewBytes * 5000) / 1024 / 1024;
    lines.push(
      '',
      `memory, ${memory.sessions.toLocaleString('en')} live sessions kept (retained after gc; load ${memory.load})`,
      `  at the first approval             ${kb(memory.firstApprovalBytes)} / session, persists ${kb(memory.persistedFirstApprovalBytes)}`,
      `  in the review of one artifact     ${kb(memory.oneReviewBytes)} / session, persists ${kb(memory.persistedOneReviewBytes)}`,
      `  in a fan-out review (3 artifacts) ${kb(memory.fanOutReviewBytes)} / session (${(memory.fanOutReviewBytes / memory.oneReviewBytes).toFixed(2)}× one review; ≤ ${kb(TARGETS.waitingBytes)} ${mark(perOk)}), persists ${kb(memory.persistedFanOutReviewBytes)}`,
      `  heap + external with them         ${mb(memory.heapWithFanOutBytes)} (≤ 256 MB ${mark(heapOk)}); 5,000 of them retain ${at5000.toFixed(0)} MB`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options.memory > 0 && typeof (globalThis as { gc?: unknown }).gc !== 'function')
    throw new Error('Run with node --expose-gc (npm run bench:fan-out does), or --memory 0.');
  const time = await timeFigures(options);
  const memory = options.memory > 0 ? await memoryFigures(options.memory) : null;
  process.stdout.write(`${report(options, time, memory)}\n`);
  if (options.json) writeFileSync(options.json, JSON.stringify({ options, time, memory }, null, 2));
}

await main();
