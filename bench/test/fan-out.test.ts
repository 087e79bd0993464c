/**
 * The fan-out benchmark works, as `npm run test:bench` checks it: a small run (one session per
 * mode, a short model latency, 20 sessions per memory cohort) prints every figure and writes
 * the JSON, and a bad option is refused naming the options. No assertion on timings: they
 * depend on the machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'steward-fan-out-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bench = (args: string[]) =>
  spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/fan-out.ts', ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });

it('prints the three phases, their ratios and the memory of each wait, and writes the JSON', () => {
  const json = join(dir, 'fan-out.json');
  const run = bench(['--sessions', '1', '--latency', '200', '--memory', '20', '--json', json]);
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  for (const line of [
    '1 worker',
    '3 independent, one reply',
    'ratio to 1 worker',
    '3 sequential, one per reply',
    'at the first approval',
    'in the review of one artifact',
    'in a fan-out review (3 artifacts)',
    'heap + external with them',
  ])
    expect(run.stdout).toContain(line);
  expect(run.stdout).toMatch(/load \d+\.\d\d/);
  const written = JSON.parse(readFileSync(json, 'utf8')) as { time: { fanOutMs: number[]; oneWorkerMs: number[] }; memory: { sessions: number } };
  expect(written.time.fanOutMs).toHaveLength(1);
  expect(written.time.oneWorkerMs).toHaveLength(3);
  expect(written.memory.sessions).toBe(20);
}, 150_000);

it('refuses an unknown option, naming the options', () => {
  const run = bench(['--sesions', '3']);
  expect(run.status).not.toBe(0);
  expect(run.stderr).toContain('Options: --sessions');
}, 60_000);
