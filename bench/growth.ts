/**
 * The growth section: one session of GROWTH_BURSTS (60) bursts — K read_blackboard rounds and
 * an ask_user each, answered every time in intake (so every answer is also a new part of the
 * request) — on SQLite, and the figures at bursts 1, 10, 30 and 60, each with its ratio to
 * burst 1: snapshot bytes, SqliteStore.append µs, resumeSession µs, retained heap of one
 * waiting session, prompt bytes, messages in the context. A cost flat in session length
 * shows as ratios near 1 once the windows are full (burst 10 on).
 */
import { join } from 'node:path';
import { createRuntime, SqliteStore, type Model, type ModelReply, type ModelRequest, type Runtime, type Session } from '../src/index.js';
import { versionCount } from '../src/core/blackboard/blackboard.js';
import { heapPlusExternal, settle } from './memory.js';
import { FIRST_INPUT, K, MAX_BURST, seedTags, tagOf, TAGS } from './scenario.js';
import { PACKAGE_ID, PACKAGES_DIR } from './steward.js';
import { median } from './stats.js';

export const GROWTH_BURSTS = 60;
export const GROWTH_POINTS = [1, 10, 30, 60] as const;
const WAIT_STATE = 'waiting_user.intake';
const SEEDS = Object.fromEntries(seedTags());
const answerOf = (b: number) => `answer-${b}: yes, go ahead`;

/** Decides from its own count of calls since the driver's last answer; sizes prompts when asked. */
class GrowthModel implements Model {
  readonly label = 'growth fake model';
  burst = 0;
  inBurst = 0;
  sizing = false;
  /** Prompt bytes and messages of the ask_user round of each burst (when sizing). */
  readonly askPrompt = new Map<number, { bytes: number; messages: number }>();

  complete(request: ModelRequest): Promise<ModelReply> {
    const p = this.inBurst++;
    const b = this.burst;
    const id = `call_${b}_${p}`;
    let name: string;
    let args: unknown;
    if (b >= GROWTH_BURSTS) [name, args] = ['finish', { summary: 'done' }];
    else if (p < K) [name, args] = ['read_blackboard', { tags: [tagOf(b, p)] }];
    else {
      [name, args] = ['ask_user', { message: `May I go on after step ${b + 1}?` }];
      if (this.sizing) this.askPrompt.set(b + 1, { bytes: Buffer.byteLength(JSON.stringify(request.messages)), messages: request.messages.length });
    }
    return Promise.resolve({ content: null, toolCalls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
  }
}

export interface GrowthPoint {
  burst: number;
  snapshotBytes: number;
  appendUs: number;
  resumeUs: number;
  retainedSqliteB: number;
  retainedMemoryB: number;
  promptBytes: number;
  promptMessages: number;
  contextMessages: number;
  requestParts: number;
}

function expectWait(r: Awaited<ReturnType<Session['send']>>, what: string): void {
  if (!r.ok || r.view.state !== WAIT_STATE) throw new Error(`[growth] ${what}: ${r.ok ? r.view.state : r.error.message}`);
}

class Driver {
  readonly model = new GrowthModel();
  readonly runtime: Runtime;
  readonly appends: { burst: number; ms: number }[] = [];
  /** Stops timing the store's appends. */
  untime = () => {};

  constructor(
    readonly store: SqliteStore | undefined,
    timeAppends = true,
  ) {
    this.runtime = createRuntime({ model: this.model, packagesDir: PACKAGES_DIR, maxBurst: MAX_BURST, ...(store ? { store } : {}) });
    if (store && timeAppends) {
      // Time every SqliteStore.append: JSON.stringify of the snapshot and the transaction.
      const append = store.append.bind(store);
      this.untime = () => {
        delete (store as { append?: unknown }).append;
      };
      store.append = async (...args) => {
        const t = performance.now();
        const r = await append(...args);
        this.appends.push({ burst: this.model.burst + 1, ms: performance.now() - t });
        return r;
      };
    }
  }

  async start(id: string): Promise<Session> {
    this.model.burst = 0;
    this.model.inBurst = 0;
    const session = await this.runtime.createSession({ packageId: PACKAGE_ID, id, blackboard: SEEDS });
    expectWait(await session.send({ type: 'user_submitted_input', text: FIRST_INPUT }), 'first burst');
    return session;
  }

  /** Answers the wait of burst b (1-based): burst b + 1 runs. */
  async answer(session: Session, b: number): Promise<Awaited<ReturnType<Session['send']>>> {
    this.model.burst = b;
    this.model.inBurst = 0;
    return session.send({ type: 'user_submitted_input', text: answerOf(b) });
  }
}

/** Checks the whole manager transcript of a finished growth session (read through the archive). */
async function check(session: Session): Promise<void> {
  const all = await session.transcript('manager');
  const tools = all.filter((m) => m.role === 'tool');
  if (tools.length !== GROWTH_BURSTS * (K + 1) + 1) throw new Error(`[growth] the transcript has ${tools.length} tool results`);
  for (let b = 0; b < GROWTH_BURSTS; b++) {
    for (let p = 0; p < K; p++) {
      const t = tools[b * (K + 1) + p]!;
      const tag = tagOf(b, p);
      if (t.role !== 'tool' || t.tool_call_id !== `call_${b}_${p}` || !t.content.endsWith(`\n${SEEDS[tag]}`)) throw new Error(`[growth] bad result ${b}/${p}`);
    }
  }
  const users = all.filter((m) => m.role === 'user');
  if (users.length !== GROWTH_BURSTS + 1) throw new Error(`[growth] ${users.length} user messages`);
}

export async function growthFigures(options: {
  dir: string;
  sessions: number;
  held: number;
  /** Sessions per point of the throwaway round that compiles the code first (not measured). */
  warm: number;
  resumes: number;
  progress: (m: string) => void;
}): Promise<GrowthPoint[]> {
  const store = new SqliteStore(join(options.dir, 'growth.db'));
  try {
    // Retained heap first, on fresh runtimes, before the other phases leave garbage behind
    // (collected during a measurement, it shows as negative bytes).
    options.progress(`growth: retained heap, ${options.held} sessions per point advanced together and closed at their point, SQLite and no store`);
    // A small throwaway round of each first: code compiled on first use is not a session's.
    await retained(new Driver(store, false), options.warm, 'warm_sqlite');
    await retained(new Driver(undefined), options.warm, 'warm_memory');
    const retainedSqlite = await retained(new Driver(store, false), options.held, 'held_sqlite');
    const retainedMemory = await retained(new Driver(undefined), options.held, 'held_memory');
    const d = new Driver(store);
    // Timing: `sessions` long sessions; appends are grouped by the burst they ran in.
    options.progress(`growth: ${options.sessions} sessions of ${GROWTH_BURSTS} bursts on SQLite`);
    for (let s = 0; s < options.sessions + 1; s++) {
      if (s === 1) d.appends.length = 0; // the first session warms up
      let session = await d.start(`growth_${s}`);
      for (let b = 1; b < GROWTH_BURSTS; b++) expectWait(await d.answer(session, b), `burst ${b + 1}`);
      const end = await d.answer(session, GROWTH_BURSTS);
      if (!end.ok || end.view.state !== 'done') throw new Error('[growth] the session did not finish');
      await check(session);
      session = undefined as never;
    }
    const appendUs = (b: number) => median(d.appends.filter((a) => a.burst === b).map((a) => a.ms)) * 1000;

    // Sizes at each point, on one more session; a session is parked (closed) at each point.
    options.progress('growth: sizes at bursts 1, 10, 30, 60; resume cost of sessions parked there');
    d.model.sizing = true;
    const sizes = new Map<number, Omit<GrowthPoint, 'appendUs' | 'resumeUs' | 'retainedSqliteB' | 'retainedMemoryB' | 'promptBytes' | 'promptMessages'>>();
    const parked = new Map<number, string>();
    const session = await d.start('growth_sizes');
    for (let b = 1; b <= GROWTH_BURSTS; b++) {
      if ((GROWTH_POINTS as readonly number[]).includes(b)) {
        const context = session.actorRef.getSnapshot().context;
        sizes.set(b, {
          burst: b,
          snapshotBytes: Buffer.byteLength(JSON.stringify(session.persisted())),
          contextMessages: context.transcripts.manager.messages.length,
          requestParts: versionCount(context.blackboard, 'request'),
        });
        // A copy parked at this wait: the same rows, under another id (resumed below).
        const id = `growth_parked_${b}`;
        const stored = (await store.load(session.id))!;
        await store.create({
          id,
          packageId: PACKAGE_ID,
          snapshot: stored.snapshot,
          entry: { kind: 'created', type: 'created', payload: {}, state: WAIT_STATE },
        });
        parked.set(b, id);
      }
      if (b < GROWTH_BURSTS) expectWait(await d.answer(session, b), `sizing burst ${b + 1}`);
    }
    session.stop();
    d.model.sizing = false;
    // resumeSession of the parked sessions, alternating between the points (so that a noisy
    // moment costs every point alike); each resumed session is closed again.
    const resumeTimes = new Map<number, number[]>(GROWTH_POINTS.map((b) => [b, []]));
    for (let i = 0; i < options.resumes; i++) {
      for (const b of GROWTH_POINTS) {
        const t = performance.now();
        const resumed = await d.runtime.resumeSession(parked.get(b)!);
        resumeTimes.get(b)!.push(performance.now() - t);
        if (resumed.view().state !== WAIT_STATE) throw new Error(`[growth] parked session ${b} resumed in ${resumed.view().state}`);
        await resumed.close();
      }
    }
    const resumeUs = (b: number) => median(resumeTimes.get(b)!.slice(Math.floor(options.resumes / 5))) * 1000;

    return GROWTH_POINTS.map((b) => ({
      ...sizes.get(b)!,
      appendUs: appendUs(b),
      resumeUs: resumeUs(b),
      retainedSqliteB: retainedSqlite.get(b)!,
      retainedMemoryB: retainedMemory.get(b)!,
      promptBytes: d.model.askPrompt.get(b)!.bytes,
      promptMessages: d.model.askPrompt.get(b)!.messages,
    }));
  } finally {
    await store.close();
  }
}

/**
 * Retained heap of one waiting session at each point: one cohort of `held` sessions per point,
 * all advanced together from the start; at its point a cohort is closed, and what that frees
 * (Δ(heap + external) after gc(), per session) is what a waiting session retains there.
 * (Measuring the heap's growth since before the sessions started also counted the code the
 * JIT compiled meanwhile: in a process already warmed by a whole round, heap snapshots showed
 * ~590 KB of optimized code and deoptimization data compiled between bursts 1 and 60 — 12 KB
 * "per session" of 50 that no session holds.)
 */
async function retained(d: Driver, held: number, prefix: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const cohorts: Session[][] = [];
  for (const point of GROWTH_POINTS) {
    const cohort: Session[] = [];
    for (let i = 0; i < held; i++) cohort.push(await d.start(`${prefix}_${point}_${i}`));
    cohorts.push(cohort);
  }
  for (let b = 1; b <= GROWTH_BURSTS; b++) {
    const at = (GROWTH_POINTS as readonly number[]).indexOf(b);
    if (at >= 0) {
      await settle();
      const withCohort = heapPlusExternal();
      await closeAll(cohorts[at]!);
      cohorts[at] = [];
      await settle();
      out.set(b, (withCohort - heapPlusExternal()) / held);
    }
    if (b === GROWTH_BURSTS) break;
    for (const cohort of cohorts) for (const s of cohort) expectWait(await d.answer(s, b), `held burst ${b + 1}`);
  }
  return out;
}

/** Closes the sessions and empties the list (in a frame of its own: a suspended loop's iterator must not keep them). */
async function closeAll(sessions: Session[]): Promise<void> {
  for (const s of sessions) await s.close();
  sessions.length = 0;
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtUs = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** The growth table: one row per figure, a column per point with its ratio to burst 1. */
export function formatGrowth(points: readonly GrowthPoint[]): string {
  const rows: [string, (p: GrowthPoint) => number, (n: number) => string, number | undefined][] = [
    ['snapshot bytes', (p) => p.snapshotBytes, fmtInt, 2],
    ['SqliteStore.append µs', (p) => p.appendUs, fmtUs, 1.5],
    ['resumeSession µs', (p) => p.resumeUs, fmtUs, 1.5],
    ['retained B / waiting session, SQLite', (p) => p.retainedSqliteB, fmtInt, 2],
    ['retained B / waiting session, no store', (p) => p.retainedMemoryB, fmtInt, undefined],
    ['prompt bytes (ask_user round)', (p) => p.promptBytes, fmtInt, undefined],
    ['messages in the context (manager)', (p) => p.contextMessages, fmtInt, undefined],
    ['parts of the request tag', (p) => p.requestParts, fmtInt, undefined],
  ];
  const first = points[0]!;
  const head = ['growth: one session, burst →', ...points.map((p) => String(p.burst)), 'target 60/1'];
  const body = rows.map(([label, pick, fmt, target]) => {
    const cells = points.map((p) => (p === first ? fmt(pick(p)) : `${fmt(pick(p))} (${(pick(p) / pick(first)).toFixed(2)}×)`));
    const last = pick(points.at(-1)!) / pick(first);
    return [label, ...cells, target === undefined ? '' : `≤ ${target}× ${last <= target ? 'ok' : 'MISSED'}`];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    line(head),
    widths.map((w) => '─'.repeat(w)).join('  '),
    ...body.map(line),
    '',
    `  ${GROWTH_BURSTS} bursts of ${K} reads + ask_user, answered in intake; ${TAGS} seeded tags. Ratios to burst 1; the windows fill by burst 10,`,
    '  so 60/10 shows whether a figure still grows. "no store": the archive of a store-less session is kept in memory, so it grows by design.',
  ].join('\n');
}
