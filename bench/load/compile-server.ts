/**
 * The benchmark's servers run compiled JavaScript, as a deployed `steward serve` does, not
 * through tsx: tsx's loader hooks about double a server's start, and a killed server's
 * replacement that starts late takes no part in the takeover. The sources are compiled afresh at each run (esbuild, file by
 * file, the layout kept), so the figures are never those of a stale dist/.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The project's folder: the servers start there, and the sources compiled are under it. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Under node_modules, so the compiled files find the project's packages as the sources do. */
const CACHE = join(ROOT, 'node_modules/.cache');

/**
 * Compiles src/ and the server processes into a folder of this run's own (a test and a bench
 * may run at once), removed when the process exits; the paths there of `steward serve`'s
 * process and the floor's.
 */
export async function compileServer(): Promise<{ steward: string; floor: string }> {
  mkdirSync(CACHE, { recursive: true });
  const out = mkdtempSync(join(CACHE, 'steward-bench-load-'));
  process.once('exit', () => rmSync(out, { recursive: true, force: true }));
  await build({
    entryPoints: [
      'src/**/*.ts',
      'bench/load/server-process.ts',
      'bench/load/floor-process.ts',
      'bench/load/driver-link.ts',
      'bench/load/numbers.ts',
      'test/serve/http.ts',
    ].map((glob) => join(ROOT, glob)),
    outbase: ROOT,
    outdir: out,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
  });
  // What the sources find beside themselves at run time (the bundled skill packages).
  symlinkSync(join(ROOT, 'src/skills/packages'), join(out, 'src/skills/packages'));
  return { steward: join(out, 'bench/load/server-process.js'), floor: join(out, 'bench/load/floor-process.js') };
}
