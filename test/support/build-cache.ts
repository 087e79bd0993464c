/**
 * Builds the tests need from the current sources (the compiled CLI, the inspector page), made
 * once per set of sources instead of once per test file: each under
 * node_modules/.cache/steward-test/<name>-<hash of the sources>, so an edit makes a new one and
 * nothing stale is ever used. Inside node_modules so that what a build leaves as
 * imports (the packages) resolves to this checkout's node_modules, as it would from dist/.
 *
 * A build is written to a temporary folder and renamed into place whole, so a folder that exists
 * is complete. A lock folder makes concurrent test files wait for one build rather than each
 * making its own; a lock left by a process that died is taken over once it is old.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashOfPaths } from '../../scripts/build-inputs.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cacheRoot = join(root, 'node_modules', '.cache', 'steward-test');
/** Longer than any build takes on a busy machine; a lock older than this was left by a dead process. */
const STALE_LOCK_MS = 5 * 60_000;
/** Other builds of the same name older than this are removed when a new one is made. */
const KEEP_OLD_MS = 24 * 60 * 60_000;

/**
 * What the builds are made from, paths from the repository's root: one set for all of them, so
 * builds of the same sources share a hash and can find each other (the CLI's page).
 */
const SOURCES = [
  'src',
  'bin/steward.mjs',
  'scripts/bundle-cli.mjs',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  // The MCP test servers the tests start (server-build.ts).
  'test/mcp/servers',
  'test/tools/servers',
  // The programs the tests start as processes (script-build.ts).
  'test/inspect/fixtures',
  'test/tools/fixtures',
  'test/support/store-writer.ts',
  // How the builds are made: a changed recipe makes new builds.
  'test/support/build-cache.ts',
  'test/support/cli-build.ts',
  'test/support/server-build.ts',
  'test/support/script-build.ts',
  'test/support/program-build.ts',
];
let sources: string | undefined;

/** A hash of the sources, once per process. */
function sourcesHash(): string {
  sources ??= hashOfPaths(root, SOURCES);
  return sources;
}

/** The folder build `name` of the current sources has (or will have once built). */
export function buildFolder(name: string): string {
  return join(cacheRoot, `${name}-${sourcesHash()}`);
}

/** Takes the lock, or says another process holds it (removing it when it is stale). */
function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock); // atomic: whoever creates it builds
    return true;
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    } catch {
      // removed meanwhile: the next try takes it or finds the build
    }
    return false;
  }
}

function removeOld(name: string, keep: string): void {
  for (const entry of readdirSync(cacheRoot)) {
    const path = join(cacheRoot, entry);
    if (path === keep || !entry.startsWith(`${name}-`)) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_OLD_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // another process removed it
    }
  }
}

function folders(name: string) {
  mkdirSync(cacheRoot, { recursive: true });
  const dir = buildFolder(name);
  return { dir, lock: `${dir}.lock`, staging: `${dir}.staging` };
}

function publish(name: string, dir: string, staging: string): void {
  renameSync(staging, dir);
  removeOld(name, dir);
}

/** The folder of build `name` of the current sources, made by `build(folder)` if missing. */
export async function cachedBuild(name: string, build: (outDir: string) => Promise<void>): Promise<string> {
  const { dir, lock, staging } = folders(name);
  const started = Date.now();
  while (!existsSync(dir)) {
    if (!tryLock(lock)) {
      if (Date.now() - started > STALE_LOCK_MS) throw new Error(`${dir}: another test process has been building it for too long (remove ${lock} if it died).`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    try {
      if (existsSync(dir)) break;
      rmSync(staging, { recursive: true, force: true });
      await build(staging);
      publish(name, dir, staging);
    } finally {
      rmSync(staging, { recursive: true, force: true });
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return dir;
}

/** cachedBuild for a synchronous build; waiting for another process blocks this one. */
export function cachedBuildSync(name: string, build: (outDir: string) => void): string {
  const { dir, lock, staging } = folders(name);
  const started = Date.now();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(dir)) {
    if (!tryLock(lock)) {
      if (Date.now() - started > STALE_LOCK_MS) throw new Error(`${dir}: another test process has been building it for too long (remove ${lock} if it died).`);
      Atomics.wait(pause, 0, 0, 50);
      continue;
    }
    try {
      if (existsSync(dir)) break;
      rmSync(staging, { recursive: true, force: true });
      build(staging);
      publish(name, dir, staging);
    } finally {
      rmSync(staging, { recursive: true, force: true });
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return dir;
}
