/**
 * Database faults say what happened and what to do, naming the file: locked by another
 * process, a read-only folder or file (reading commands still work), a malformed file, a
 * full disk, a folder passed as --db; and a reading command never creates the database.
 * Real `steward` processes; permissions are tested without root's permission override (the
 * suite may run as root, which ignores them), the full disk on a tiny tmpfs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, openSync, writeSync, closeSync, writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, root, runCli, until, type CliResult } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const CLI_TIMEOUT = 90_000;
const isRoot = process.getuid?.() === 0;
const tmp = useTempDir('steward-store-faults-');

function expectStoreFailure(result: CliResult, code: string, ...parts: Array<string | RegExp>): void {
  expect(result.code, result.stdout + result.stderr).toBe(1);
  expect(result.stderr).toContain(`steward [${code}]: `);
  for (const part of parts) expect(result.stderr).toMatch(typeof part === 'string' ? new RegExp(part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : part);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

/** A store with one session waiting in intake; returns its id. */
async function storeWithSession(db: string): Promise<string> {
  const created = await runCli(['new', '--package', 'tiny'], { db });
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}

describe('store faults', () => {
  async function holdLock(db: string, mode: 'write' | 'exclusive') {
    const holder = spawn(process.execPath, [join(root, 'test/support/lock-holder.mjs'), db, mode], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    holder.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await until(() => out.includes('locked'), 'the lock holder');
    return holder;
  }

  it(
    'a store locked by another process: a clear store_locked error naming the file, without a long wait',
    async () => {
      const db = tmp.path('locked.db');
      const id = await storeWithSession(db);
      const writer = await holdLock(db, 'write');
      try {
        const send = await runCli(['send', id, 'input', '--text', 'hi'], { db });
        // One busy timeout, said in the message (not 16.8 s of silent waits).
        expectStoreFailure(send, 'store_locked', `"${db}"`, 'locked by another process (waited 5000 ms)', /wait until it finishes/i);
        // A stuck writer does not stop readers (WAL).
        const list = await runCli(['list'], { db });
        expect(list.stderr).toBe('');
        expect(list.stdout).toContain(id);
      } finally {
        writer.kill('SIGKILL');
      }
      const exclusive = await holdLock(db, 'exclusive');
      try {
        const list = await runCli(['list'], { db });
        expectStoreFailure(list, 'store_locked', `"${db}"`, 'waited 2000 ms');
      } finally {
        exclusive.kill('SIGKILL');
      }
    },
    CLI_TIMEOUT,
  );

  it(
    'a read-only folder and file: list, show, log and audit work; send says the store is read-only',
    async () => {
      const dir = tmp.path('readonly');
      mkdirSync(dir);
      const db = join(dir, 'steward.db');
      const id = await storeWithSession(db);
      chmodSync(dir, 0o555);
      chmodSync(db, 0o444);
      onTestFinished(() => chmodSync(dir, 0o755)); // so the temp folder can be removed
      const readOnly = { db, permissionsBite: isRoot };
      const list = await runCli(['list'], readOnly);
      expect(list.stderr).toBe('');
      expect(list.stdout).toContain(id);
      const show = await runCli(['show', id, '--json'], readOnly);
      expect(show.stderr).toBe('');
      expect(parseJson<ViewJson>(show).state).toBe('waiting_user.intake');
      const log = await runCli(['log', id], readOnly);
      expect(log.code, log.stderr).toBe(0);
      const audit = await runCli(['audit', id], readOnly);
      expect(audit.code, audit.stderr).toBe(0);
      const send = await runCli(['send', id, 'input', '--text', 'hi'], readOnly);
      expectStoreFailure(send, 'store_read_only', `"${db}"`, 'read-only', /reading commands \(list, show, log, audit\) still work/);
      expect(existsSync(`${db}-wal`)).toBe(false);
    },
    CLI_TIMEOUT,
  );

  it(
    'a malformed file and a file that is not SQLite: store_corrupt naming the file and the fix',
    async () => {
      const db = tmp.path('malformed.db');
      const id = await storeWithSession(db);
      const size = statSync(db).size;
      const fd = openSync(db, 'r+');
      writeSync(fd, Buffer.alloc(size - 100, 0x5a), 0, size - 100, 100); // keep the 100-byte header
      closeSync(fd);
      const show = await runCli(['show', id], { db });
      expectStoreFailure(show, 'store_corrupt', `"${db}"`, /malformed/, /backup/);
      const send = await runCli(['send', id, 'input', '--text', 'hi'], { db });
      expectStoreFailure(send, 'store_corrupt', `"${db}"`);

      const text = tmp.path('notes.txt');
      writeFileSync(text, 'just some notes, not a database\n'.repeat(200));
      expectStoreFailure(await runCli(['list'], { db: text }), 'store_corrupt', `"${text}"`, 'not an SQLite database');
    },
    CLI_TIMEOUT,
  );

  it(
    'a folder passed as --db: store_unavailable saying it is a folder',
    async () => {
      const dir = tmp.path('a-folder');
      mkdirSync(dir);
      expectStoreFailure(await runCli(['list', '--db', dir], { db: dir }), 'store_unavailable', `"${dir}" is a folder`, /steward\.db/, '--db or STEWARD_DB');
      expectStoreFailure(await runCli(['new', '--db', dir], { db: dir }), 'store_unavailable', `"${dir}" is a folder`);
    },
    CLI_TIMEOUT,
  );

  it(
    'reading commands never create the database or its folder; the missing session names the store',
    async () => {
      const db = tmp.path('nowhere/deeper/steward.db');
      const list = await runCli(['list'], { db });
      expect(list.code, list.stderr).toBe(0);
      const show = await runCli(['show', 's_missing'], { db });
      expectStoreFailure(show, 'session_not_found', `No session "s_missing" in the store ${db}`, 'steward list');
      const log = await runCli(['log', 's_missing'], { db });
      expectStoreFailure(log, 'session_not_found', db);
      expect(existsSync(tmp.path('nowhere'))).toBe(false);
    },
    CLI_TIMEOUT,
  );
});

describe('a full disk', () => {
  let mountPoint = '';
  let mounted = false;
  beforeAll(() => {
    if (!isRoot) return;
    mountPoint = tmp.path('tiny-disk');
    try {
      // The real thing: SQLITE_FULL from a file system that is really full.
      mkdirSync(mountPoint);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint], { stdio: 'ignore' });
      mounted = true;
    } catch {
      mounted = false;
    }
  });
  afterAll(() => {
    if (mounted) execFileSync('umount', [mountPoint]);
  });

  it.skipIf(!isRoot)(
    'store_full says the disk is full and what to do; the session keeps its last saved state',
    async (ctx) => {
      if (!mounted) ctx.skip('mount -t tmpfs is not allowed here (it needs root with CAP_SYS_ADMIN)');
      const db = join(mountPoint, 'steward.db');
      const id = await storeWithSession(db);
      const big = tmp.path('big.txt');
      writeFileSync(big, 'word '.repeat(80_000)); // 400 KB, stored about three times: more than the disk holds
      const send = await runCli(['send', id, 'input', '--text-file', big], { db, env: { STEWARD_MAX_USER_TEXT: '1000000' } });
      expectStoreFailure(send, 'store_full', `"${db}"`, /disk .*full/, /free (some )?space/i);
      const show = await runCli(['show', id, '--json'], { db });
      expect(show.stderr).toBe('');
      expect(parseJson<ViewJson>(show).state).toBe('waiting_user.intake');
    },
    CLI_TIMEOUT,
  );
});
