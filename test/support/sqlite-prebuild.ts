/**
 * better-sqlite3 for the shared install of the tarball (tarball.ts) without compiling it again.
 *
 * A user's `npm install` gets better-sqlite3's binary from its install script, `prebuild-install
 * || node-gyp rebuild`: prebuild-install downloads the prebuilt binary for their Node from
 * GitHub, which CI cannot reach, so there node-gyp compiles it, minutes of CPU on the run's
 * critical path. The repository's own node_modules has that very binary already built (same
 * package version, this Node): packed as the prebuilt archive prebuild-install looks for and
 * offered through its documented local-prebuilds setting, the app's install runs the same
 * install script and gets it without the download or the compile.
 *
 * Only when the version the tarball asks for is the repository's and the binary loads in this
 * Node; otherwise (or when the archive's name is not the one prebuild-install looks for, e.g.
 * another Node on PATH) nothing is offered and the install compiles it, as a user's would.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Writes the archive into `dir` and returns the environment that makes the install use it,
 * or `undefined` when the repository's binary does not fit (the install then compiles).
 */
export async function sqlitePrebuild(root: string, dir: string): Promise<NodeJS.ProcessEnv | undefined> {
  const pkg = join(root, 'node_modules/better-sqlite3');
  const binary = join(pkg, 'build/Release/better_sqlite3.node');
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
  const wanted = manifest.optionalDependencies?.['better-sqlite3'];
  if (!wanted || !existsSync(binary)) return undefined;
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  if (version !== wanted) return undefined;
  try {
    await run(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], { cwd: root });
  } catch {
    return undefined;
  }
  // The layout and name of better-sqlite3's own release archives (prebuild-install's defaults).
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const stage = mkdtempSync(join(dir, 'stage-'));
  try {
    mkdirSync(join(stage, 'build/Release'), { recursive: true });
    cpSync(binary, join(stage, 'build/Release/better_sqlite3.node'));
    await run('tar', ['-czf', join(dir, name), '-C', stage, 'build']);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return { ...process.env, npm_config_better_sqlite3_local_prebuilds: dir };
}
