/**
 * The "what each part costs" table: each layer of the stack (bench/parts.ts) with its round
 * and pause+resume medians, its ratio to the bare XState baseline of the same run, and what
 * it added to the layer below it.
 */
import { readFileSync } from 'node:fs';
import type { Mode } from './figures.js';
import { ratioOf, type Figure } from './report.js';
import { median, type ModeSamples } from './stats.js';

/** The layers, bottom up: each adds one part to the one before it. */
export const PART_LAYERS: readonly { mode: Mode; over?: Mode; label: string; adds: string }[] = [
  { mode: 'baseline-hot', label: 'bare XState baseline', adds: '' },
  { mode: 'chart-bare', over: 'baseline-hot', label: 'session chart, bare turn', adds: 'the chart (every reply through checking, its emitted events)' },
  {
    mode: 'chart-turns',
    over: 'chart-bare',
    label: '+ the runtime turns',
    adds: 'prompt assembly, the event-loop slice (a macrotask once a 1 ms slice is used up)',
  },
  { mode: 'steward-hot', over: 'chart-turns', label: '+ Session = figures 1, 2', adds: 'user event checks and stamp, view, send queue, memory archive' },
  { mode: 'steward-listened', over: 'steward-hot', label: '  + one listener', adds: 'live events stamped and forwarded (event hub)' },
  {
    mode: 'steward-memory',
    over: 'steward-hot',
    label: '  + journal (MemoryStore)',
    adds: 'journal entries, archive, snapshot per write; resume at every wait',
  },
  { mode: 'steward-sqlite', over: 'steward-memory', label: '    SQLite, not memory', adds: 'the SQLite commits (fsync at the wait)' },
];

const us = (values: number[]) => median(values) * 1000;
const fmt = (v: number) => (Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(1)} µs`);
const signed = (v: number) => (v >= 0 ? `+${fmt(v)}` : `−${fmt(-v)}`);

export interface PartFigure {
  mode: Mode;
  over?: Mode;
  label: string;
  adds: string;
  round: number;
  pauseResume: number;
  roundRatio: number;
  pauseResumeRatio: number;
}

export function partFigures(samples: Record<Mode, ModeSamples>): PartFigure[] {
  const base = samples['baseline-hot'];
  const baseRound = us(base.rounds);
  const basePR = us(base.pauseResume);
  return PART_LAYERS.filter((l) => samples[l.mode].sessions > 0).map((l) => {
    const round = us(samples[l.mode].rounds);
    const pauseResume = us(samples[l.mode].pauseResume);
    return { ...l, round, pauseResume, roundRatio: round / baseRound, pauseResumeRatio: pauseResume / basePR };
  });
}

export function formatParts(parts: readonly PartFigure[]): string {
  const head = ['layer (medians)', 'round', '×', 'Δ round', 'pause+resume', '×', 'Δ p+r', 'what the layer adds'];
  const rows = parts.map((p) => {
    const prev = parts.find((q) => q.mode === p.over);
    return [
      p.label,
      fmt(p.round),
      `${p.roundRatio.toFixed(2)}×`,
      prev ? signed(p.round - prev.round) : '',
      fmt(p.pauseResume),
      `${p.pauseResumeRatio.toFixed(2)}×`,
      prev ? signed(p.pauseResume - prev.pauseResume) : '',
      p.adds,
    ];
  });
  const widths = head.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]!].length)));
  const cell = (c: string, i: number) => (i === 0 || i === 7 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!));
  const line = (cells: string[]) => cells.map(cell).join('  ').trimEnd();
  return [
    'What each part costs (× = ratio to the bare XState baseline of this run; Δ = what it adds to the layer it builds on)',
    line(head),
    widths.map((w) => '─'.repeat(w)).join('  '),
    ...rows.map(line),
  ].join('\n');
}

/** What --compare reads of an earlier run's JSON: its figures' ratios and its parts. */
export interface EarlierRun {
  path: string;
  date?: string;
  load?: number[];
  figures: { id: string; label: string; ratio: number | null }[];
  parts: PartFigure[];
}

export function readEarlierRun(path: string): EarlierRun {
  const data = JSON.parse(readFileSync(path, 'utf8')) as { run?: { date?: string; loadavg?: number[] }; figures?: EarlierRun['figures']; parts?: PartFigure[] };
  if (!Array.isArray(data.figures)) throw new Error(`--compare ${path}: no "figures" in it; write one with npm run bench -- --json ${path}`);
  return { path, date: data.run?.date, load: data.run?.loadavg, figures: data.figures, parts: Array.isArray(data.parts) ? data.parts : [] };
}

/** The ratios of this run beside an earlier run's: the figures with a baseline, then the parts. */
export function formatComparison(before: EarlierRun, now: { figures: readonly Figure[]; parts: readonly PartFigure[] }): string {
  const ratio = (r: number | null | undefined) => (r === null || r === undefined ? '—' : `${r.toFixed(2)}×`);
  const rows: string[][] = [];
  for (const f of now.figures) {
    const earlier = before.figures.find((b) => b.id === f.id);
    const r = ratioOf(f);
    if (r === null && !earlier?.ratio) continue;
    const budget = f.budget === undefined || r === null ? '' : `≤ ${f.budget}× ${r <= f.budget ? 'ok' : 'OVER'}`;
    rows.push([f.label, ratio(earlier?.ratio), ratio(r), f.target === undefined ? '' : `≤ ${f.target}×`, budget]);
  }
  for (const p of now.parts) {
    if (p.mode === 'baseline-hot') continue;
    const earlier = before.parts.find((b) => b.mode === p.mode);
    rows.push([`parts: ${p.label.trim()}, round`, ratio(earlier?.roundRatio), ratio(p.roundRatio), '', '']);
    rows.push([`parts: ${p.label.trim()}, pause+resume`, ratio(earlier?.pauseResumeRatio), ratio(p.pauseResumeRatio), '', '']);
  }
  const head = ['ratio to bare XState', 'before', 'now', 'target', 'budget now'];
  const widths = head.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]!].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i >= 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const load = before.load ? `, load ${before.load.map((l) => l.toFixed(1)).join(' ')}` : '';
  return [
    `Before (${before.path}${before.date ? `, ${before.date}` : ''}${load}) and now, each against its own run's baseline`,
    line(head),
    widths.map((w) => '─'.repeat(w)).join('  '),
    ...rows.map(line),
  ].join('\n');
}
