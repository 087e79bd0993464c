/**
 * Figure 5 (durable store): the cost of persisting one accepted event, and the resume time
 * of a session whose journal holds 1,000 entries, on SQLite (a temp file). Baseline
 * counterparts: its persist (getPersistedSnapshot → JSON.stringify) and its restore
 * (JSON.parse → createActor({ snapshot }).start()) of the same point of the scenario.
 */
import { join } from 'node:path';
import { MemoryStore, SqliteStore, type Session } from '../src/index.js';
import type { JournalEntry } from '../src/store.js';
import { openEnvelope } from '../src/runtime/persisted.js';
import { answer, restoreBaseline, startBaseline, type BaselineActor, type BaselineMachine } from './baseline.js';
import type { FakeModel } from './fake-model.js';
import { answerText, BURSTS, FIRST_INPUT } from './scenario.js';
import { expectState, StewardHarness } from './steward.js';
import { summarize, timeEach, timeEachSync, type Summary } from './stats.js';

export interface StoreFigures {
  /** SqliteStore.append of one entry + the mid-session snapshot inside a model loop (`durable: false`: stringify, transaction, no fsync). */
  sqliteAppend: Summary;
  /** The same append as the write that ends a send() (durable: the WAL fsynced at commit). */
  sqliteAppendDurable: Summary;
  /** JSON.stringify of that snapshot alone (part of sqliteAppend). */
  snapshotStringify: Summary;
  /** MemoryStore.append of the same (structuredClone). */
  memoryAppend: Summary;
  /** Session.persisted(): getPersistedSnapshot + envelope, done by Steward for every journalled event. */
  stewardPersisted: Summary;
  /** Baseline: getPersistedSnapshot → JSON.stringify at the same point. */
  baselinePersist: Summary;
  /** runtime.resumeSession(id) of a waiting session whose journal holds `journalEntries` entries. */
  resumeLong: Summary;
  /** The same session with its own short journal. */
  resumeShort: Summary;
  /** Parts of a resume: store.load (SELECT + JSON.parse) and openEnvelope (zod validation). */
  resumeLoad: Summary;
  resumeValidate: Summary;
  /** Baseline: stop the old actor, JSON.parse, createActor({ snapshot }).start(). */
  baselineRestore: Summary;
  journalEntries: number;
  shortJournalEntries: number;
  snapshotBytesMid: number;
}

/** Runs a Steward session to its (waits)-th wait. */
async function stewardToWait(h: StewardHarness, id: string, waits: number): Promise<Session> {
  h.model.begin();
  const session = await h.open(id);
  expectState('store bench', await session.send({ type: 'user_submitted_input', text: FIRST_INPUT }), 'waiting_user.intake');
  for (let c = 1; c < waits; c++) expectState('store bench', await session.send({ type: 'user_submitted_input', text: answerText(c) }), 'waiting_user.intake');
  return session;
}

async function baselineToWait(model: FakeModel, machine: BaselineMachine, waits: number): Promise<BaselineActor> {
  model.begin();
  const actor = startBaseline(machine);
  await answer(actor, FIRST_INPUT);
  for (let c = 1; c < waits; c++) await answer(actor, answerText(c));
  if (!actor.getSnapshot().matches('waiting')) throw new Error('baseline did not wait');
  return actor;
}

export async function storeFigures(options: {
  model: FakeModel;
  machine: BaselineMachine;
  dir: string;
  iterations: number;
  journalEntries: number;
  progress: (message: string) => void;
}): Promise<StoreFigures> {
  const { model, machine, dir, iterations: n, journalEntries } = options;
  const warm = Math.max(5, Math.floor(n / 10));
  const store = new SqliteStore(join(dir, 'store-bench.db'));
  const memory = new MemoryStore();
  try {
    const h = new StewardHarness(model, 'sqlite', store);

    // ── persist cost: a realistic mid-session point (the 2nd wait) ──
    options.progress('persist cost per event');
    const mid = await stewardToWait(h, 'persist_mid', 2);
    const snapshot = mid.persisted();
    const json = JSON.stringify(snapshot);
    const actorEntry = (await store.journal('persist_mid')).findLast((e) => e.kind === 'actor')!;
    const entry = { kind: actorEntry.kind, type: actorEntry.type, payload: actorEntry.payload, state: actorEntry.state };

    await store.create({ id: 'append_sqlite', packageId: 'bench', snapshot, entry: { ...entry, kind: 'created', type: 'created' } });
    await memory.create({ id: 'append_memory', packageId: 'bench', snapshot, entry: { ...entry, kind: 'created', type: 'created' } });
    let sqliteRevision = 1;
    let memoryRevision = 1;
    const sqliteAppend = summarize(
      await timeEach(n, warm, async () => {
        sqliteRevision = await store.append({ id: 'append_sqlite', expectedRevision: sqliteRevision, entries: [entry], snapshot: snapshot, durable: false });
      }),
    );
    const sqliteAppendDurable = summarize(
      await timeEach(n, warm, async () => {
        sqliteRevision = await store.append({ id: 'append_sqlite', expectedRevision: sqliteRevision, entries: [entry], snapshot: snapshot });
      }),
    );
    const memoryAppend = summarize(
      await timeEach(n, warm, async () => {
        memoryRevision = await memory.append({ id: 'append_memory', expectedRevision: memoryRevision, entries: [entry], snapshot: snapshot });
      }),
    );
    const snapshotStringify = summarize(timeEachSync(n, warm, () => JSON.stringify(snapshot)));
    const stewardPersisted = summarize(timeEachSync(n, warm, () => mid.persisted()));
    const baseMid = await baselineToWait(model, machine, 2);
    const baselinePersist = summarize(timeEachSync(n, warm, () => JSON.stringify(baseMid.getPersistedSnapshot())));
    mid.stop();
    baseMid.stop();

    // ── resume: a session waiting at its last wait, journal padded to journalEntries ──
    options.progress(`resume with a ${journalEntries}-entry journal`);
    const long = await stewardToWait(h, 'resume_long', BURSTS);
    const longSnapshot = long.persisted();
    const real: JournalEntry[] = await store.journal('resume_long');
    const actorEntries = real.filter((e) => e.kind === 'actor');
    let revision = long.revision!;
    for (let i = real.length; i < journalEntries; i++) {
      const e = actorEntries[i % actorEntries.length]!;
      revision = await store.append({
        id: 'resume_long',
        expectedRevision: revision,
        entries: [{ kind: e.kind, type: e.type, payload: e.payload, state: e.state }],
        snapshot: longSnapshot,
      });
    }
    const entries = (await store.journal('resume_long')).length;
    if (entries !== journalEntries) throw new Error(`journal holds ${entries} entries, expected ${journalEntries}`);
    long.stop();
    const short = await stewardToWait(h, 'resume_short', BURSTS);
    const shortEntries = (await store.journal('resume_short')).length;
    short.stop();

    // Timed: runtime.resumeSession alone (it stops the previous live session), the long and
    // the short journal alternating; the resumed sessions are checked after.
    const longTimes: number[] = [];
    const shortTimes: number[] = [];
    let lastLong: Session | undefined;
    let lastShort: Session | undefined;
    for (let i = 0; i < warm + n; i++) {
      let t0 = performance.now();
      lastLong = await h.runtime.resumeSession('resume_long');
      const tLong = performance.now() - t0;
      t0 = performance.now();
      lastShort = await h.runtime.resumeSession('resume_short');
      const tShort = performance.now() - t0;
      if (i >= warm) {
        longTimes.push(tLong);
        shortTimes.push(tShort);
      }
    }
    for (const s of [lastLong, lastShort]) {
      if (s?.view().state !== 'waiting_user.intake') throw new Error(`resumed ${s?.id} in ${s?.view().state}`);
      s.stop();
    }
    const resumeLong = summarize(longTimes);
    const resumeShort = summarize(shortTimes);
    const resumeLoad = summarize(await timeEach(n, warm, () => store.load('resume_long')));
    const stored = (await store.load('resume_long'))!.snapshot;
    const resumeValidate = summarize(timeEachSync(n, warm, () => openEnvelope('resume_long', stored)));

    const baseLast = await baselineToWait(model, machine, BURSTS);
    const baseJson = JSON.stringify(baseLast.getPersistedSnapshot());
    let live: BaselineActor = baseLast;
    const baselineRestore = summarize(
      timeEachSync(n, warm, () => {
        live.stop();
        live = restoreBaseline(machine, baseJson);
      }),
    );
    if (!live.getSnapshot().matches('waiting')) throw new Error('baseline restored in the wrong state');
    live.stop();

    return {
      sqliteAppend,
      sqliteAppendDurable,
      snapshotStringify,
      memoryAppend,
      stewardPersisted,
      baselinePersist,
      resumeLong,
      resumeShort,
      resumeLoad,
      resumeValidate,
      baselineRestore,
      journalEntries: entries,
      shortJournalEntries: shortEntries,
      snapshotBytesMid: Buffer.byteLength(json),
    };
  } finally {
    await store.close();
    await memory.close();
  }
}
