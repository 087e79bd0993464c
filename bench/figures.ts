/**
 * The figures of SCENARIO.md, each Steward figure beside the baseline's from the same run.
 * Times in µs, sizes in bytes; all medians. The targets are issue 10's (stricter than
 * SCENARIO.md's 2× round and 10× durable pause+resume).
 */
import type { Figure } from './report.js';
import { BURSTS, EVENTS_PER_BURST } from './scenario.js';
import { median, type ModeSamples } from './stats.js';
import type { StoreFigures } from './store-bench.js';

export const MODES = [
  'baseline-hot',
  'steward-hot',
  'baseline-durable',
  'steward-memory',
  'steward-sqlite',
  'chart-bare',
  'chart-turns',
  'steward-listened',
] as const;
export type Mode = (typeof MODES)[number];

export interface Measured {
  samples: Record<Mode, ModeSamples>;
  retained: { steward: number[]; baseline: number[] };
  live: { perSession: number; size: number; sessions: number };
  persistedBytes: { steward: number; baseline: number };
  store: StoreFigures;
}

const us = (ms: number) => ms * 1000;

export function buildFigures({ samples, retained, live, persistedBytes, store }: Measured): Figure[] {
  const m = (mode: Mode, pick: (s: ModeSamples) => number[]) => us(median(pick(samples[mode])));
  const rounds = (s: ModeSamples) => s.rounds;
  const burst = (s: ModeSamples) => s.burst;
  const burstHot = m('steward-hot', burst);
  return [
    // 1. round
    { id: 'round', label: '1 round (hot)', unit: 'µs', steward: m('steward-hot', rounds), baseline: m('baseline-hot', rounds), target: 1.5, budget: 2.5 },
    ...Array.from({ length: BURSTS }, (_, b): Figure => ({
      id: `round_burst_${b + 1}`,
      label: `  round, burst ${b + 1}`,
      unit: 'µs',
      steward: m('steward-hot', (s) => s.roundsByBurst[b]!),
      baseline: m('baseline-hot', (s) => s.roundsByBurst[b]!),
    })),
    {
      id: 'round_memory',
      label: '  round, durable MemoryStore',
      unit: 'µs',
      steward: m('steward-memory', rounds),
      baseline: m('baseline-durable', rounds),
      note: "Steward journals every event while the model loop runs (writes are chained; events that arrive during a write share the next one), so part of each round's persist lands in the pause; the baseline persists only at waits",
    },
    {
      id: 'round_sqlite',
      label: '  round, durable SQLite',
      unit: 'µs',
      steward: m('steward-sqlite', rounds),
      baseline: m('baseline-durable', rounds),
      target: 2.5,
    },
    { id: 'burst_hot', label: '  burst: 1st call → wait seen (hot)', unit: 'µs', steward: burstHot, baseline: m('baseline-hot', burst) },
    { id: 'burst_sqlite', label: '  burst, durable SQLite', unit: 'µs', steward: m('steward-sqlite', burst), baseline: m('baseline-durable', burst) },

    // 2. pause + resume
    {
      id: 'pause_resume_hot',
      label: '2 pause+resume (hot)',
      unit: 'µs',
      steward: m('steward-hot', (s) => s.pauseResume),
      baseline: m('baseline-hot', (s) => s.pauseResume),
      target: 2,
      budget: 4,
    },
    {
      id: 'pause_hot',
      label: '  pause: boundary call → wait seen',
      unit: 'µs',
      steward: m('steward-hot', (s) => s.pause),
      baseline: m('baseline-hot', (s) => s.pause),
    },
    {
      id: 'resume_hot',
      label: '  resume: answer → next call',
      unit: 'µs',
      steward: m('steward-hot', (s) => s.resume),
      baseline: m('baseline-hot', (s) => s.resume),
    },
    {
      id: 'pause_resume_memory',
      label: '  pause+resume, durable MemoryStore',
      unit: 'µs',
      steward: m('steward-memory', (s) => s.pauseResume),
      baseline: m('baseline-durable', (s) => s.pauseResume),
    },
    {
      id: 'pause_resume_sqlite',
      label: '  pause+resume, durable SQLite',
      unit: 'µs',
      steward: m('steward-sqlite', (s) => s.pauseResume),
      baseline: m('baseline-durable', (s) => s.pauseResume),
      target: 4,
      note: 'baseline = its in-memory durable mode (getPersistedSnapshot → JSON.stringify → JSON.parse → createActor({ snapshot }))',
    },
    {
      id: 'pause_sqlite',
      label: '    of which pause (drains the journal)',
      unit: 'µs',
      steward: m('steward-sqlite', (s) => s.pause),
      baseline: m('baseline-durable', (s) => s.pause),
    },
    {
      id: 'resume_sqlite',
      label: '    of which resume (restore + send)',
      unit: 'µs',
      steward: m('steward-sqlite', (s) => s.resume),
      baseline: m('baseline-durable', (s) => s.resume),
    },
    {
      id: 'session_hot',
      label: '  whole session, 1st → 19th call (hot)',
      unit: 'µs',
      steward: m('steward-hot', (s) => s.session),
      baseline: m('baseline-hot', (s) => s.session),
      note: 'wall time, GC pauses included (the per-interval medians above mostly miss them)',
    },

    // 3, 4. memory
    {
      id: 'retained',
      label: '3 retained bytes / waiting session',
      unit: 'B',
      steward: median(retained.steward),
      baseline: median(retained.baseline),
      target: 2,
    },
    {
      id: 'live_retained',
      label: '  kept by runtime.live / finished session',
      unit: 'B',
      steward: live.perSession,
      baseline: null,
      note: `runtime.live held ${live.size} sessions after ${live.sessions} finished ones; freed only when the runtime is dropped`,
    },
    { id: 'persisted_bytes', label: '4 persisted bytes at first wait', unit: 'B', steward: persistedBytes.steward, baseline: persistedBytes.baseline },

    // 5. durable store
    {
      id: 'persist_event_sqlite',
      label: '5 persist / accepted event, SQLite e2e',
      unit: 'µs',
      steward: (m('steward-sqlite', burst) - burstHot) / EVENTS_PER_BURST,
      baseline: null,
      note: `(median durable burst − median hot burst) / ${EVENTS_PER_BURST} events journalled in that window (the answer + ${EVENTS_PER_BURST - 1} manager turns)`,
    },
    {
      id: 'persist_event_memory',
      label: '  persist / accepted event, Memory e2e',
      unit: 'µs',
      steward: (m('steward-memory', burst) - burstHot) / EVENTS_PER_BURST,
      baseline: null,
    },
    {
      id: 'sqlite_append',
      label: '  SqliteStore.append (mid-session, in a model loop)',
      unit: 'µs',
      steward: us(store.sqliteAppend.median),
      baseline: us(store.baselinePersist.median),
      note: `one entry + the ${store.snapshotBytesMid.toLocaleString('en-US')}-byte snapshot of the 2nd wait; baseline = getPersistedSnapshot → JSON.stringify at the same point`,
    },
    {
      id: 'sqlite_append_durable',
      label: '  SqliteStore.append, durable (ends a send())',
      unit: 'µs',
      steward: us(store.sqliteAppendDurable.median),
      baseline: null,
      note: 'the same append committed at synchronous=FULL: the WAL is fsynced (the figure above is a commit inside a model loop, at NORMAL)',
    },
    { id: 'snapshot_stringify', label: '    of which JSON.stringify(snapshot)', unit: 'µs', steward: us(store.snapshotStringify.median), baseline: null },
    {
      id: 'memory_append',
      label: '  MemoryStore.append (mid-session)',
      unit: 'µs',
      steward: us(store.memoryAppend.median),
      baseline: us(store.baselinePersist.median),
    },
    { id: 'session_persisted', label: '  Session.persisted() per event', unit: 'µs', steward: us(store.stewardPersisted.median), baseline: null },
    {
      id: 'resume_long',
      label: `  resume, ${store.journalEntries}-entry journal`,
      unit: 'µs',
      steward: us(store.resumeLong.median),
      baseline: us(store.baselineRestore.median),
      note: 'runtime.resumeSession of a session waiting at its 3rd wait, alternated with the short-journal one; baseline = stop + JSON.parse + createActor({ snapshot }).start()',
    },
    {
      id: 'resume_short',
      label: `  resume, ${store.shortJournalEntries}-entry journal`,
      unit: 'µs',
      steward: us(store.resumeShort.median),
      baseline: us(store.baselineRestore.median),
    },
    { id: 'resume_load', label: '    of which store.load', unit: 'µs', steward: us(store.resumeLoad.median), baseline: null },
    { id: 'resume_validate', label: '    of which openEnvelope (zod)', unit: 'µs', steward: us(store.resumeValidate.median), baseline: null },
  ];
}
