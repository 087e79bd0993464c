/**
 * The `steward` command compiled from the current sources, once per set of sources (see
 * build-cache.ts), for the tests that start it as a process: a process starts in about a third
 * of the time it takes through tsx. Laid out as the installed package is (package.json,
 * bin/steward.mjs, dist/ with the bundled skill packages), because the sources find files
 * relative to themselves (../../package.json, ./packages) and tell compiled from source by their
 * own extension. Each module is compiled on its own by esbuild, as tsc does for dist/ (imports and
 * lazily loaded modules stay as they are); types are not checked here (`npm run typecheck` does).
 * The inspector page is not part of it (no CLI test loads the page; the browser tests build it:
 * test/inspect/page-build.ts).
 */
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { cachedBuildSync, hashOf } from './build-cache.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const INPUTS = ['src', 'bin/steward.mjs', 'package.json', 'tsconfig.json'];

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    // The inspector page is browser code, built by Vite (tsconfig.build.json leaves it out too).
    if (entry.isDirectory()) return path === join(root, 'src/inspect/page') ? [] : typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function build(out: string): void {
  buildSync({
    entryPoints: typeScriptFiles(join(root, 'src')),
    outdir: join(out, 'dist'),
    outbase: join(root, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'error',
  });
  cpSync(join(root, 'src/skills/packages'), join(out, 'dist/skills/packages'), { recursive: true });
  mkdirSync(join(out, 'bin'));
  cpSync(join(root, 'bin/steward.mjs'), join(out, 'bin/steward.mjs'));
  cpSync(join(root, 'package.json'), join(out, 'package.json'));
}

let bin: string | undefined;

/** bin/steward.mjs of the compiled CLI of the current sources (built on first use in this process). */
export function compiledCli(): string {
  bin ??= join(cachedBuildSync('cli', hashOf(INPUTS), build), 'bin/steward.mjs');
  return bin;
}
