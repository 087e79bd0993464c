/**
 * The packed tarball of the current sources, and one plain install of it, each made once per
 * set of sources and shared by every test file that needs them (test/consumer, test/examples).
 *
 * The tarball: made by `scripts/pack.mjs` (what `npm run package` runs: a staging copy, built
 * there, with the package.json a user gets), so the repo's own dist/ is never rebuilt under
 * other tests' feet (it packs the repository's dist/ when that is a build of the current
 * sources, and builds in the staging copy when not). Keyed by a hash of what goes in.
 *
 * The install: `npm install <tarball>` into an empty app, as a user runs it: Steward's
 * dependencies from the npm registry and better-sqlite3 (an optional dependency) through its
 * own install script, given the repository's built binary as its prebuilt one
 * (sqlite-prebuild.ts; compiled from source when that does not fit). Done once, keyed by the
 * tarball's hash and the lockfile, and each app gets a copy of that install (`appWithSteward`)
 * and then `npm install`s its own packages on top, as a user adds packages to an app: npm keeps
 * what is installed and builds nothing again.
 *
 * Both live under the system temp folder; a lock folder makes concurrent test files wait for
 * one build instead of racing, and a waiter takes over from a builder that died.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BUILD_INPUTS, hashOf, hashOfPaths, SHIPPED_AS_IS } from '../../scripts/build-inputs.mjs';
import { root, until } from './cli-process.js';
import { sqlitePrebuild } from './sqlite-prebuild.js';

const run = promisify(execFile);

export interface Tarball {
  /** Absolute path of the .tgz file. */
  file: string;
  /** Bytes of the .tgz, bytes unpacked, and number of files, as `npm pack --json` reports them. */
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: string[];
}

export interface InstalledSteward {
  /** The app folder: its package.json, package-lock.json and node_modules are those of `npm install <tarball>`. */
  dir: string;
  /** Wall time of that install in milliseconds (made by whichever test file came first). */
  ms: number;
  /** better-sqlite3's binary came from the repository's build (sqlite-prebuild.ts), not a compile. */
  prebuilt: boolean;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What `make` writes to `dir`, made by one process of all that ask at once: creating `dir` is
 * the lock (atomic), `dir/<result>` the result. A waiter whose maker died (its pid is gone,
 * no result) removes the folder and makes it itself; one whose maker failed (the folder is
 * gone) makes it itself, so the failure shows in that test file too.
 */
async function once<T>(dir: string, result: string, what: string, timeoutMs: number, make: () => Promise<T>): Promise<T> {
  const done = join(dir, result);
  const owner = join(dir, 'owner.pid');
  for (;;) {
    try {
      mkdirSync(dir);
    } catch {
      const found = await until<{ value: T } | { dead: number }>(
        () => {
          if (existsSync(done)) return { value: JSON.parse(readFileSync(done, 'utf8')) as T };
          if (!existsSync(dir)) return { dead: 0 };
          const pid = existsSync(owner) ? Number(readFileSync(owner, 'utf8')) : 0;
          return pid > 0 && !alive(pid) && !existsSync(done) ? { dead: pid } : undefined;
        },
        `${what} in ${dir} (made by another test file; remove the folder if that one is stuck)`,
        timeoutMs,
      );
      if ('value' in found) return found.value;
      // (A folder already gone may be another waiter's new lock by now: left alone.)
      if (found.dead > 0) rmSync(dir, { recursive: true, force: true });
      continue;
    }
    writeFileSync(owner, String(process.pid));
    try {
      const value = await make();
      // Written aside and renamed: a waiter never reads half of it.
      writeFileSync(`${done}.tmp`, JSON.stringify(value));
      renameSync(`${done}.tmp`, done);
      return value;
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }
}

/** `make()`, calling `forget` if it fails, so that a cached promise of it is made again by the next caller. */
function forgetFailure<T>(make: () => Promise<T>, forget: () => void): Promise<T> {
  return make().catch((error: unknown) => {
    forget();
    throw error;
  });
}

let packed: Promise<Tarball> | undefined;

export function packedTarball(): Promise<Tarball> {
  // A failure is not kept: the test files of a worker share this module, and the next one tries again.
  packed ??= forgetFailure(
    () => {
      // Keyed by what pack.mjs packs: the build's inputs and what it ships as it is.
      const dir = join(tmpdir(), `steward-tarball-${hashOfPaths(root, [...BUILD_INPUTS, ...SHIPPED_AS_IS])}`);
      return once(dir, 'tarball.json', 'the packed tarball', 240_000, async () => {
        const { stdout } = await run(process.execPath, [join(root, 'scripts/pack.mjs'), '--json', '--out', dir], { cwd: root, maxBuffer: 16 << 20 });
        const [info] = JSON.parse(stdout) as { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] }[];
        return {
          file: join(dir, info!.filename),
          size: info!.size,
          unpackedSize: info!.unpackedSize,
          entryCount: info!.entryCount,
          files: info!.files.map((f) => f.path),
        } satisfies Tarball;
      });
    },
    () => (packed = undefined),
  );
  return packed;
}

let installed: Promise<InstalledSteward> | undefined;

/**
 * `npm install <tarball>` into an empty app (`{ "type": "module" }`), with install scripts:
 * what a user gets. Once per tarball and lockfile (the lockfile pins the npm that runs it, the
 * tools the tests add on top and the better-sqlite3 whose binary it reuses).
 */
export function installedSteward(): Promise<InstalledSteward> {
  installed ??= forgetFailure(
    async () => {
      const tarball = await packedTarball();
      const key = hashOf(root, [tarball.file, join(root, 'package-lock.json')]);
      // Beside the tarball's folder and the apps (all right under the temp folder), so the
      // relative `file:../steward-tarball-…` npm saves means the same tarball from each of them.
      const dir = join(tmpdir(), `steward-installed-${key}`);
      return once(dir, 'installed.json', 'the installed tarball', 900_000, async () => {
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }, null, 2));
        const prebuilds = join(dir, 'prebuilds');
        mkdirSync(prebuilds);
        const env = await sqlitePrebuild(root, prebuilds);
        const ms = await npmInstall(dir, [tarball.file], env);
        return { dir, ms, prebuilt: env !== undefined } satisfies InstalledSteward;
      });
    },
    () => (installed = undefined),
  );
  return installed;
}

/**
 * A new app folder right under the temp folder (removed by the caller): a copy of the shared
 * install (package.json, package-lock.json, node_modules), then `npm install extra…` in it
 * when given. Returns the folder and that install's wall time in milliseconds.
 */
export async function appWithSteward(prefix: string, extra: string[] = []): Promise<{ dir: string; ms: number }> {
  const shared = await installedSteward();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  await copyInstall(shared, dir, { manifest: true });
  return { dir, ms: extra.length > 0 ? await npmInstall(dir, extra) : 0 };
}

/**
 * Copies the shared install's node_modules into `dir` (and its package.json and lockfile when
 * `manifest`), for an app with a package.json of its own that then runs `npm install`. With
 * `cp -a` (symbolic links kept as they are): tens of thousands of files, which Node's own copy
 * does more slowly and, in its synchronous form, one app after another. Real copies, not
 * hard links: npm rewrites some files in place, which must not change the shared install.
 */
export async function copyInstall(shared: InstalledSteward, dir: string, { manifest }: { manifest: boolean }): Promise<void> {
  const parts = manifest ? ['package.json', 'package-lock.json', 'node_modules'] : ['node_modules'];
  await run('cp', ['-a', ...parts.map((part) => join(shared.dir, part)), dir]);
}

/**
 * `npm install` in `dir` from the npm registry only, preferring the local npm cache (which
 * `npm ci` has just filled in CI). Returns the wall time in milliseconds.
 */
export async function npmInstall(dir: string, args: string[] = [], env?: NodeJS.ProcessEnv): Promise<number> {
  const started = Date.now();
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...args], {
    cwd: dir,
    env,
    maxBuffer: 16 << 20,
  });
  return Date.now() - started;
}
