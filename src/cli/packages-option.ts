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
import { PackageError } from '../core/errors.js';

export interface PackagesOptions {
  /** `--packages DIR`, repeatable. */
  packages?: string[];
}

/** Your own packages folders and where they were named, for messages ("--packages", "STEWARD_PACKAGES", the config field). */
export interface UserPackagesDirs {
  source: string;
  dirs: string[];
}

/**
 * The folders to pass to createRuntime / loadPackages: the bundled one first, then the user's.
 *
 * @example
 * packagesDirs({ packages: ['./packages'] }, process.env, process.cwd()); // [bundledPackagesDir, '/abs/path/packages']
 */
export function packagesDirs(options: PackagesOptions, env: NodeJS.ProcessEnv, cwd: string): string[] {
  const chosen = checkedUserPackagesDirs(options, env, cwd);
  return chosen ? [bundledPackagesDir, ...chosen.dirs] : [bundledPackagesDir];
}

/**
 * Your own packages folders (`--packages`, else STEWARD_PACKAGES, else stately.config.json),
 * each checked to be a folder; undefined when none is named.
 *
 * @example
 * checkedUserPackagesDirs({}, { STEWARD_PACKAGES: '/team/packages' }, process.cwd()); // { source: 'STEWARD_PACKAGES', dirs: ['/team/packages'] }
 */
export function checkedUserPackagesDirs(options: PackagesOptions, env: NodeJS.ProcessEnv, cwd: string): UserPackagesDirs | undefined {
  const chosen = userPackagesDirs(options, env, cwd);
  for (const dir of chosen?.dirs ?? []) {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) {
      throw new PackageError(
        `${chosen!.source} names the packages folder ${dir}, which ${stat ? 'is not a folder' : 'does not exist'}; ` +
          `create it (a folder of package folders, each with a manifest.json and workers/) or fix ${chosen!.source}.`,
      );
    }
  }
  return chosen;
}

function userPackagesDirs(options: PackagesOptions, env: NodeJS.ProcessEnv, cwd: string): UserPackagesDirs | undefined {
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
