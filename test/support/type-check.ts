/**
 * `tsc --strict` checks of an installed app's TypeScript projects (test/consumer), several in one
 * process (tsc-projects.mjs): projects that read the same declaration files share them instead
 * of each process parsing them again, which on a machine with few cores is time every other
 * test file waits for.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from './cli-process.js';

const run = promisify(execFile);

/** What tsc says of each project in `dir` (`''` when it compiles), checked by one process. */
export async function typeCheck(dir: string, projects: string[]): Promise<Record<string, string>> {
  const { stdout } = await run(process.execPath, [join(root, 'test/support/tsc-projects.mjs'), ...projects], { cwd: dir, maxBuffer: 16 << 20 });
  return JSON.parse(stdout) as Record<string, string>;
}
