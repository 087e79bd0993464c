/**
 * Holds a lock on a SQLite file until killed, as a stuck process would, for
 * test/cli/store-faults.test.ts. Usage: node test/support/lock-holder.mjs <db> <write|exclusive>
 *   write:     an open write transaction (BEGIN IMMEDIATE): other writers wait, WAL readers do not.
 *   exclusive: locking_mode EXCLUSIVE, as a program that opened the file for itself: everyone waits.
 * Prints "locked" once the lock is taken.
 */
import Database from 'better-sqlite3';

const [path, mode] = process.argv.slice(2);
if (!path || (mode !== 'write' && mode !== 'exclusive')) {
  console.error('usage: lock-holder.ts <db> <write|exclusive>');
  process.exit(2);
}
const db = new Database(path);
if (mode === 'exclusive') {
  db.pragma('journal_mode = DELETE');
  db.pragma('locking_mode = EXCLUSIVE');
  db.exec('BEGIN EXCLUSIVE');
  db.exec('CREATE TABLE IF NOT EXISTS lock_holder (x)');
} else {
  db.exec('BEGIN IMMEDIATE');
  db.exec('CREATE TABLE IF NOT EXISTS lock_holder (x)');
}
process.stdout.write('locked\n');
setInterval(() => {}, 1_000);
