/**
 * What starting a `steward` command costs: the CPU time (user + system, as the process itself
 * counts it at exit) of the common commands on a small store, for the bundled command
 * (`bin/steward.mjs`, what users run), beside `steward list` from tsc's unbundled
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
const bin = join(root, 'bin/steward.mjs');
/** Loaded first in each child: writes the process's own CPU time (µs) to stderr as it exits. */
const REPORT_CPU = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('cpu-us '+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;

/** Runs `node [--import REPORT_CPU] args`; its CPU time in ms and its stdout. `fails`: the command is expected to exit non-zero. */
function run(args: string[], { fails = false, measure = true } = {}): { ms: number; stdout: string } {
  const child = spawnSync(process.execPath, [...(measure ? ['--import', REPORT_CPU] : []), ...args], {
    env: { ...process.env, STEWARD_DB: db },
    encoding: 'utf8',
  });
  const reported = /cpu-us (\d+)/.exec(child.stderr ?? '');
  if ((child.status !== 0) !== fails || (measure && !reported)) throw new Error(`${args.join(' ')} exited ${child.status}: ${child.stderr}`);
  return { ms: reported ? Number(reported[1]) / 1000 : 0, stdout: child.stdout };
}

// One session to show and log, made before measuring.
const stored = run([bin, 'new'], { measure: false }).stdout.trim();

const UNBUNDLED = 'list, tsc output (dist/cli/main.js)';
const NEW = 'new';
/** Each mode's arguments; `send` answers the session the same round's `new` made. */
const modes: Record<string, { args: (made: string) => string[]; fails?: boolean }> = {
  'node (floor)': { args: () => ['-e', ''] },
  [UNBUNDLED]: {
    args: () => [
      '--input-type=module',
      '-e',
      `const { runAsProcess } = await import(${JSON.stringify(join(root, 'dist/cli/main.js'))}); await runAsProcess([process.execPath, "steward", ...process.argv.slice(1)]);`,
      'list',
    ],
  },
  list: { args: () => [bin, 'list'] },
  'show ID': { args: () => [bin, 'show', stored] },
  'show (no such session)': { args: () => [bin, 'show', 's_nosuchsession'], fails: true },
  'log ID': { args: () => [bin, 'log', stored] },
  'packages --json': { args: () => [bin, 'packages', '--json'] },
  [NEW]: { args: () => [bin, 'new'] },
  'send ID input --text': { args: (made) => [bin, 'send', made, 'input', '--text', 'A story about a lighthouse.'] },
};

const samples = new Map<string, number[]>(Object.keys(modes).map((mode) => [mode, []]));
for (let i = 0; i < runs; i++) {
  let made = stored;
  for (const [mode, { args, fails }] of Object.entries(modes)) {
    const { ms, stdout } = run(args(made), { fails });
    if (mode === NEW) made = stdout.trim();
    samples.get(mode)!.push(ms);
  }
}
const floor = median(samples.get('node (floor)')!);
const unbundled = median(samples.get(UNBUNDLED)!);
console.log(`CPU time of one process, median of ${runs} (load average ${loadavg()[0]!.toFixed(2)} at the end):`);
for (const [mode, values] of samples) {
  const ms = median(values);
  console.log(`  ${mode.padEnd(40)} ${ms.toFixed(0).padStart(5)} ms   ×${(ms / floor).toFixed(2)} the floor   ×${(ms / unbundled).toFixed(2)} the tsc list`);
}
