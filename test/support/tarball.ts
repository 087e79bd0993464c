/**
 * The packed tarball of the current sources, once per set of sources: test/consumer and
 * test/examples both install it. Made by `scripts/pack.mjs` (what `npm run package` runs: a
 * staging copy, built there, with the package.json a user gets), so the repo's own dist/ is
 * never rebuilt under other tests' feet. Keyed by a hash of what goes in, under the system
 * temp folder; a lock folder makes concurrent test files wait for one build instead of racing.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { root, until } from './cli-process.js';

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

const inputs = ['package.json', 'README.md', 'LICENSE', 'bin', 'docs', 'src', 'scripts', 'tsconfig.json', 'tsconfig.build.json'];

function listFiles(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => listFiles(join(path, name)));
}

function sourcesHash(): string {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap((p) => listFiles(join(root, p)))) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

let packed: Promise<Tarball> | undefined;

export function packedTarball(): Promise<Tarball> {
  packed ??= (async () => {
    const dir = join(tmpdir(), `steward-tarball-${sourcesHash()}`);
    const done = join(dir, 'tarball.json');
    try {
      mkdirSync(dir); // atomic: whoever creates it builds, the others wait for tarball.json
    } catch {
      await until(() => existsSync(done), `${done} (another test file is packing Steward; remove the folder if it died)`, 240_000);
      return JSON.parse(readFileSync(done, 'utf8')) as Tarball;
    }
    try {
      const { stdout } = await run(process.execPath, [join(root, 'scripts/pack.mjs'), '--json', '--out', dir], { cwd: root, maxBuffer: 16 << 20 });
      const [info] = JSON.parse(stdout) as { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] }[];
      const tarball: Tarball = {
        file: join(dir, info!.filename),
        size: info!.size,
        unpackedSize: info!.unpackedSize,
        entryCount: info!.entryCount,
        files: info!.files.map((f) => f.path),
      };
      writeFileSync(done, JSON.stringify(tarball));
      return tarball;
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  })();
  return packed;
}

/**
 * `npm install` in `dir` from the npm registry only, preferring the local npm cache (which
 * `npm ci` has just filled in CI). Returns the wall time in milliseconds.
 */
export async function npmInstall(dir: string, args: string[] = []): Promise<number> {
  const started = Date.now();
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...args], {
    cwd: dir,
    maxBuffer: 16 << 20,
  });
  return Date.now() - started;
}
