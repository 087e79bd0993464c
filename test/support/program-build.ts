/**
 * What the programs the tests start as processes have in common when esbuild compiles them
 * (server-build.ts, script-build.ts): ES modules for Node 20, laid out under `out` as in the
 * repository, so a process's command line still says which program it is.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, type BuildOptions } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Compiles `programs` (paths from the repository's root) into `out`, with `options` on top.
 *
 * @example
 * buildPrograms(['test/tools/servers/notes.mjs'], out, { bundle: true });
 */
export function buildPrograms(programs: readonly string[], out: string, options: BuildOptions): void {
  buildSync({
    entryPoints: programs.map((program) => join(root, program)),
    outdir: out,
    outbase: root,
    // ES modules by their name: no package.json says so where the build lies.
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    ...options,
  });
}
