/**
 * Loading better-sqlite3, the driver of SqliteStore. It is an optional dependency: a native
 * module that npm installs where it can (a prebuilt binary, else a build from source) and
 * silently leaves out where it cannot (no compiler, `--omit=optional`) or leaves unbuilt
 * (`--ignore-scripts`). It is loaded when the first store opens, so an app that keeps its
 * sessions elsewhere never needs it, and its absence is one error that names the fix.
 */
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { UserError } from '../core/errors.js';

/** Where else sessions can live, said by both failures below. */
const ELSEWHERE = 'or keep sessions elsewhere: PostgreSQL (`--db postgres://…` or STEWARD_DB; `PostgresStore` in code) or, in code, `MemoryStore`.';

/**
 * The better-sqlite3 constructor, or a UserError that says how to get it.
 *
 * @example
 * const db = new (sqliteDriver())('steward.db', { timeout: 5000 });
 */
export function sqliteDriver(): typeof Database {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND') {
      throw new UserError(
        'SqliteStore needs better-sqlite3, an optional dependency of Steward that this install left out (npm skips it when it cannot be built, ' +
          'or with --omit=optional). Run `npm install better-sqlite3@12` in your app (without a prebuilt binary for this platform it compiles: ' +
          `it needs python3, make and a C++ compiler), ${ELSEWHERE}`,
        { cause: error },
      );
    }
    // Installed but not loadable: its build step did not run (--ignore-scripts, npm's install-script
    // approval) or ran for another Node version ("compiled against a different Node.js version").
    if (code === 'ERR_DLOPEN_FAILED' || /bindings file|NODE_MODULE_VERSION/.test(String((error as Error).message))) {
      throw new UserError(
        `SqliteStore needs better-sqlite3, which is installed but not built for this Node (${process.version}): run \`npm rebuild better-sqlite3\` in your app ` +
          `(npm must be allowed to run its install script), ${ELSEWHERE}`,
        { cause: error },
      );
    }
    throw error;
  }
}
