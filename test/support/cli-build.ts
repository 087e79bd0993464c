/**
 * The `steward` command compiled from the current sources, once per set of sources (see
 * build-cache.ts), for the CLI tests: those that start it as a process, and those that run its
 * bundle's `main` inside the worker (cli-in-process.ts). It starts much sooner than the
 * sources through tsx, which compiles every module at each start. Laid out as the installed package is (package.json,
 * bin/steward.mjs, dist/ with the bundled skill packages), because the sources find files
 * relative to themselves (../../package.json, ./packages) and tell compiled from source by their
 * own extension. Each module is compiled on its own by esbuild, as tsc does for dist/ (imports and
 * lazily loaded modules stay as they are), and the command itself is bundled as `npm run build`
 * bundles it (scripts/bundle-cli.mjs); types are not checked here (`npm run typecheck` does).
 * Its dist/inspector is the page built from the same sources (test/inspect/page-build.ts), which
 * a test that starts the CLI with `--inspect local` builds first: the others never pay for it.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { buildFolder, cachedBuildSync } from './build-cache.js';
// @ts-expect-error: a build script of the repository, plain JavaScript without declarations.
import { bundleCliSync } from '../../scripts/bundle-cli.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

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
  bundleCliSync(root, join(out, 'dist/cli/bundle'));
  cpSync(join(root, 'src/skills/packages'), join(out, 'dist/skills/packages'), { recursive: true });
  mkdirSync(join(out, 'bin'));
  cpSync(join(root, 'bin/steward.mjs'), join(out, 'bin/steward.mjs'));
  cpSync(join(root, 'package.json'), join(out, 'package.json'));
  // Where the installed package has its page: the page built from the same sources, which
  // exists once a test has called buildPage() (test/inspect/page-build.ts).
  symlinkSync(join('..', '..', basename(buildFolder('inspector-page'))), join(out, 'dist/inspector'));
}

let bin: string | undefined;

/** bin/steward.mjs of the compiled CLI of the current sources (built on first use in this process). */
export function compiledCli(): string {
  bin ??= join(cachedBuildSync('cli', build), 'bin/steward.mjs');
  return bin;
}

/** The folder of the compiled CLI, laid out as the installed package: its dist/ has each module of src/ compiled on its own. */
export function compiledPackage(): string {
  return dirname(dirname(compiledCli()));
}
