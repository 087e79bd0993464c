/**
 * Where Steward's own files are, from any module of it: the sources (run through tsx), the
 * compiled dist/, or the bundled command line (dist/cli/bundle, one file for many modules, so
 * a module's own URL no longer says where its neighbours are). Found by walking up from the
 * module to the package.json of the package named "steward".
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The name in Steward's package.json (the published package.json has the same). */
const PACKAGE_NAME = 'steward';

/**
 * The folder holding Steward's package.json, above `moduleUrl` (a module's `import.meta.url`).
 *
 * @example
 * const root = stewardRoot(import.meta.url); // '/app/node_modules/steward'
 */
export function stewardRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && nameOf(manifest) === PACKAGE_NAME) return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`Steward's package.json was not found above ${fileURLToPath(moduleUrl)}: the installation is incomplete; install steward again.`);
    dir = parent;
  }
}

/** Whether `moduleUrl` is a source file (run through tsx) rather than compiled JavaScript. */
export const isSourceModule = (moduleUrl: string): boolean => moduleUrl.endsWith('.ts');

function nameOf(manifest: string): unknown {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}

/**
 * Steward's version, from its package.json.
 *
 * @example
 * stewardVersion(); // '0.9.0'
 */
export function stewardVersion(): string {
  const pkg = JSON.parse(readFileSync(join(stewardRoot(import.meta.url), 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}
