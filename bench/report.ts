/**
 * The printed table (figure, Steward, baseline, ratio, target) and the JSON file.
 */
import { writeFileSync } from 'node:fs';

export type Unit = 'µs' | 'B';

export interface Figure {
  id: string;
  label: string;
  unit: Unit;
  steward: number;
  /** The baseline's figure from the same run; null when the baseline has no counterpart. */
  baseline: number | null;
  /** Largest acceptable ratio steward / baseline, when there is a target. */
  target?: number;
  /**
   * The ratio the figure may rise to since the session chart became one table that checks
   * every reply in `checking` and emits its own events (clarity bought with microseconds);
   * `--compare` prints it beside the target.
   */
  budget?: number;
  /** What the figure is compared with, when it is not the obvious counterpart. */
  note?: string;
}

export const ratioOf = (f: Figure) => (f.baseline === null || f.baseline === 0 ? null : f.steward / f.baseline);

function fmt(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return '—';
  if (unit === 'B') return `${Math.round(value).toLocaleString('en-US')} B`;
  if (Math.abs(value) >= 1000) return `${(value / 1000).toFixed(2)} ms`;
  return `${value.toFixed(Math.abs(value) >= 100 ? 0 : 1)} µs`;
}

const pad = (s: string, n: number) => s + ' '.repeat(Math.max(0, n - [...s].length));
const padLeft = (s: string, n: number) => ' '.repeat(Math.max(0, n - [...s].length)) + s;

export function formatTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => {
    const ratio = ratioOf(f);
    const verdict = f.target === undefined || ratio === null ? '' : ratio <= f.target ? ' ok' : ' MISSED';
    return [
      f.label,
      fmt(f.steward, f.unit),
      f.baseline === null ? '—' : fmt(f.baseline, f.unit),
      ratio === null ? '—' : `${ratio.toFixed(2)}×`,
      f.target === undefined ? '' : `≤ ${f.target}×${verdict}`,
    ];
  });
  const head = ['figure (medians)', 'Steward', 'baseline', 'ratio', 'target'];
  const widths = head.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]!].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === 4 ? pad(c, widths[i]!) : padLeft(c, widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(head), widths.map((w) => '─'.repeat(w)).join('  ')];
  for (const r of rows) out.push(line(r));
  const notes = figures.filter((f) => f.note).map((f) => `  ${f.label.trim()}: ${f.note}`);
  if (notes.length) out.push('', 'Notes:', ...notes);
  return out.join('\n');
}

export function writeJson(path: string, data: unknown): void {
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}
