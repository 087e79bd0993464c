/**
 * What starting a `steward` command costs: the CPU time (user + system, as the process itself
 * counts it at exit) of `steward list` on an empty store, for the bundled command
 * (`bin/steward.mjs`, what users run), beside the same command from tsc's unbundled
 * dist/cli/main.js and an empty Node process (the floor), alternating, in one run. Needs
 * `npm run build` first. Only the ratios compare across runs.
 *
 *   npm run bench:cli [-- --runs N]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const at = process.argv.indexOf('--runs');
const runs = at > 0 ? Number(process.argv[at + 1]) : 15;
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number, e.g. --runs 15');

const db = join(mkdtempSync(join(tmpdir(), 'steward-bench-cli-')), 'bench.db');
/** Loaded first in each child: writes the process's own CPU time (µs) to stderr as it exits. */
const REPORT_CPU = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('cpu-us '+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;
const UNBUNDLED = 'steward list, tsc output (dist/cli/main.js)';
const modes: Record<string, string[]> = {
  'node (floor)': ['-e', ''],
  [UNBUNDLED]: [
    '--input-type=module',
    '-e',
    `const { main } = await import(${JSON.stringify(join(root, 'dist/cli/main.js'))}); await main([process.execPath, "steward", ...process.argv.slice(1)]);`,
    'list',
  ],
  'steward list, bundled (bin/steward.mjs)': [join(root, 'bin/steward.mjs'), 'list'],
};

const samples = new Map<string, number[]>(Object.keys(modes).map((mode) => [mode, []]));
for (let i = 0; i < runs; i++) {
  for (const [mode, args] of Object.entries(modes)) {
    const child = spawnSync(process.execPath, ['--import', REPORT_CPU, ...args], { env: { ...process.env, STEWARD_DB: db }, encoding: 'utf8' });
    const reported = /cpu-us (\d+)/.exec(child.stderr ?? '');
    if (child.status !== 0 || !reported) throw new Error(`${mode} failed (exit ${child.status}): ${child.stderr}`);
    samples.get(mode)!.push(Number(reported[1]) / 1000);
  }
}
const floor = median(samples.get('node (floor)')!);
const unbundled = median(samples.get(UNBUNDLED)!);
console.log(`CPU time of one process, median of ${runs} (load average ${loadavg()[0]!.toFixed(2)} at the end):`);
for (const [mode, values] of samples) {
  const ms = median(values);
  console.log(`  ${mode.padEnd(44)} ${ms.toFixed(0).padStart(5)} ms   ×${(ms / floor).toFixed(2)} the floor   ×${(ms / unbundled).toFixed(2)} the tsc output`);
}
