/**
 * Which skill packages a command loads: the folders of `--packages DIR` (repeatable), else
 * of STEWARD_PACKAGES (folders separated by the platform's path delimiter, ":" on Linux),
 * else of the `packages` field of stately.config.json (relative to that file), beside the
 * bundled packages; with none of them, the bundled packages only. A folder of yours that
 * defines a bundled package's id replaces the bundled one (see loadPackages).
 */
import { statSync } from 'node:fs';
import { delimiter, isAbsolute, resolve } from 'node:path';
import { loadStatelyConfig } from '../inspect/config.js';
import { bundledPackagesDir } from '../skills/index.js';
import { PackageError } from '../errors.js';

export interface PackagesOptions {
  /** `--packages DIR`, repeatable. */
  packages?: string[];
}

/** The folders to pass to createRuntime / loadPackages: the bundled one first, then the user's. */
export function packagesDirs(options: PackagesOptions, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const chosen = userPackagesDirs(options, env, cwd);
  if (!chosen) return [bundledPackagesDir];
  for (const dir of chosen.dirs) {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) {
      throw new PackageError(
        `${chosen.source} names the packages folder ${dir}, which ${stat ? 'is not a folder' : 'does not exist'}; ` +
          `create it (a folder of package folders, each with a manifest.json and workers/) or fix ${chosen.source}.`,
      );
    }
  }
  return [bundledPackagesDir, ...chosen.dirs];
}

function userPackagesDirs(options: PackagesOptions, env: NodeJS.ProcessEnv, cwd: string): { source: string; dirs: string[] } | undefined {
  if (options.packages?.length) {
    if (options.packages.some((dir) => !dir.trim())) throw new PackageError('--packages needs a folder, e.g. --packages ./packages.');
    return { source: '--packages', dirs: options.packages.map((dir) => resolve(cwd, dir)) };
  }
  const fromEnv = env.STEWARD_PACKAGES?.split(delimiter).filter((dir) => dir.trim() !== '');
  if (fromEnv?.length) return { source: 'STEWARD_PACKAGES', dirs: fromEnv.map((dir) => resolve(cwd, dir)) };
  const { config, path, dir } = loadStatelyConfig(cwd);
  if (path && config.packages?.length) {
    return { source: `the "packages" field of ${path}`, dirs: config.packages.map((folder) => (isAbsolute(folder) ? folder : resolve(dir, folder))) };
  }
  return undefined;
}
