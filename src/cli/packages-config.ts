/**
 * Lists a folder of packages in the `packages` field of the working directory's
 * stately.config.json (creating the file when there is none), so that every later command
 * run there loads it without `--packages`: what `steward init-package` does.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { loadStatelyConfig, STATELY_CONFIG_FILE } from '../inspect/config.js';

export interface ListedFolder {
  /** The config file written (or read, when the folder was listed already). */
  path: string;
  /** The entry as the file holds it: relative to the file when the folder is under it. */
  entry: string;
  /** False when the file listed the folder already (nothing was written). */
  added: boolean;
  /** True when there was no config file and one was written. */
  created: boolean;
}

/**
 * The entry for `folder` in a config file of `cwd`: `./rel` under it, else the absolute path.
 *
 * @example
 * packagesEntry('/work/app/packages', '/work/app'); // './packages'
 */
export function packagesEntry(folder: string, cwd: string): string {
  const rel = relative(cwd, folder);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return folder;
  return `./${rel.split(sep).join('/')}`;
}

/**
 * Checks the config of `cwd` (a broken one is refused before anything is written), then adds
 * `folder` to its `packages` unless an entry names it already.
 *
 * @example
 * const listed = listPackagesFolder('/work/app/packages', '/work/app');
 * console.log(listed.added ? `added ${listed.entry} to ${listed.path}` : 'already listed');
 */
export function listPackagesFolder(folder: string, cwd: string): ListedFolder {
  const { config, path, dir } = loadStatelyConfig(cwd);
  const target = resolve(folder);
  const file = path ?? join(cwd, STATELY_CONFIG_FILE);
  const listed = (config.packages ?? []).find((entry) => resolve(dir, entry) === target);
  if (listed !== undefined) return { path: file, entry: listed, added: false, created: false };
  const entry = packagesEntry(target, cwd);
  // The file as written, not the parsed config: the defaults the schema fills in stay out of it.
  const raw = path ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>) : {};
  const packages = Array.isArray(raw.packages) ? [...(raw.packages as unknown[]), entry] : [entry];
  writeFileSync(file, `${JSON.stringify({ ...raw, packages }, null, 2)}\n`);
  return { path: file, entry, added: true, created: path === null };
}
