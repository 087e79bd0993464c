/**
 * Where the local inspector of `steward inspect` and `steward run --inspect local` keeps
 * laid-out charts (InspectorOptions.layoutsDir): the user's cache folder, `$XDG_CACHE_HOME`
 * when it is an absolute path, else `~/.cache`, shared by the inspectors of every project;
 * none when neither is known.
 */
import { isAbsolute, join } from 'node:path';
import type { CliIo } from './io.js';

/**
 * @example
 * layoutsDir({ HOME: '/home/ada' }); // '/home/ada/.cache/steward/inspector-layouts'
 */
export function layoutsDir(env: CliIo['env']): string | undefined {
  const cache = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : env.HOME ? join(env.HOME, '.cache') : undefined;
  return cache ? join(cache, 'steward', 'inspector-layouts') : undefined;
}
