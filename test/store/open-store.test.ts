/**
 * openStore picks the backend from the location, and `pg` is loaded only for a
 * postgres:// URL: an app (or a CLI command) on SQLite never loads it. Checked in a fresh
 * Node process, where node-postgres (CommonJS) shows up in the require cache once loaded.
 */
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { isPostgresUrl, resolveStoreLocation } from '../../src/store/open-store.js';
import { compiledPackage } from '../support/cli-build.js';
import { closedPort, useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-open-store-');

/** Runs `code` as an ES module in a child, in the compiled package (test/support/cli-build.ts); prints whether pg was loaded. */
function pgLoadedAfter(code: string): { loaded: boolean; output: string } {
  const script = `${code}
const { createRequire } = await import('node:module');
const cache = createRequire(import.meta.url).cache;
console.log('PG_LOADED=' + Object.keys(cache).some((k) => /[\\\\/]node_modules[\\\\/]pg[\\\\/]/.test(k)));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: compiledPackage(), encoding: 'utf8', timeout: 60_000 });
  const output = `${child.stdout}\n${child.stderr}`;
  const match = /PG_LOADED=(true|false)/.exec(child.stdout);
  if (!match) throw new Error(`the child printed no result (exit ${child.status}):\n${output}`);
  return { loaded: match[1] === 'true', output };
}

it('tells PostgreSQL URLs from file paths, and keeps a URL as given', () => {
  expect(isPostgresUrl('postgres://u@h/db')).toBe(true);
  expect(isPostgresUrl('postgresql://u@h/db')).toBe(true);
  expect(isPostgresUrl('./postgres.db')).toBe(false);
  expect(resolveStoreLocation(undefined, { STEWARD_DB: 'postgres://u:p@h/db' }, '/work')).toBe('postgres://u:p@h/db');
  expect(resolveStoreLocation('postgresql://h/db', { STEWARD_DB: 'x.db' }, '/work')).toBe('postgresql://h/db');
  expect(resolveStoreLocation('x.db', {}, '/work')).toBe('/work/x.db');
  expect(resolveStoreLocation(undefined, {}, '/work')).toBe('/work/.steward/steward.db');
});

it('the public API, the CLI and an SQLite store never load pg; a postgres:// URL does', async () => {
  const db = JSON.stringify(tmp.path('steward.db'));
  const sqlite = pgLoadedAfter(`
await import('./dist/index.js');
await import('./dist/cli/main.js');
const { openStore } = await import('./dist/store/open-store.js');
const store = await openStore(${db});
await store.list();
await store.close();`);
  expect(sqlite.loaded, sqlite.output).toBe(false);

  const url = JSON.stringify(`postgres://app:pw@127.0.0.1:${await closedPort()}/steward`);
  const postgres = pgLoadedAfter(`
const { openStore } = await import('./dist/store/open-store.js');
await openStore(${url}).catch((error) => { if (error.code !== 'store_unavailable') throw error; });`);
  expect(postgres.loaded, postgres.output).toBe(true);
}, 60_000);
