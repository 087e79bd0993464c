/**
 * WAL checkpoints on a thread of their own, for an SQLite store that serves for hours
 * (`steward serve`).
 *
 * SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000 pages:
 * that commit copies the pages into the database file and fsyncs both files. better-sqlite3
 * is synchronous, so it does so on the event loop, and every session of the process waits:
 * `npm run bench:load` saw such commits take 97 and 232 ms at 1,000 live sessions. Here the
 * store's own connection never checkpoints (`wal_autocheckpoint = 0`); a worker thread with
 * its own connection checkpoints every `intervalMs`, in two steps:
 * - PASSIVE copies what the WAL holds without taking the write lock: the bulk of the work,
 *   while the store's commits go on;
 * - then RESTART copies the few frames committed meanwhile, holding writers back for that
 *   short while, so the next commit starts the WAL over. With PASSIVE alone a server that
 *   commits all the time never lets the WAL start over (it does so only once wholly copied),
 *   and the file grows without end. The store's writes that meet the lock wait for it on a
 *   timer (sqlite-busy.ts); the event loop does not wait.
 * Past `maxWalBytes` (a WAL grown while the worker was held up) TRUNCATE replaces RESTART and
 * shrinks the file. Should the worker fail, the store's connection checkpoints inline again,
 * so the WAL never grows unchecked.
 *
 * Durability is unchanged (wal-flush.ts): the worker's connection runs at
 * `synchronous = NORMAL`, at which SQLite syncs the WAL before each checkpoint and the
 * database file after it.
 *
 * The worker's code is a string evaluated as CommonJS (`eval: true`): it then runs the same
 * from the sources and from dist, and loads the very better-sqlite3 the store loaded.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

export interface BackgroundCheckpointOptions {
  /** How often the worker checkpoints (ms; default 500). */
  intervalMs?: number;
  /** The WAL size past which the worker's checkpoint also shrinks the file (default 32 MiB). */
  maxWalBytes?: number;
}

/** SQLite's own default: a checkpoint once the WAL reaches this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/** How long a RESTART or TRUNCATE checkpoint waits for the store's writers and readers (ms); then it tries again at the next interval. */
const CHECKPOINT_WAIT_MS = 2000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Driver = require(workerData.driverPath);
const db = new Driver(workerData.path, { fileMustExist: true, timeout: workerData.checkpointWaitMs });
db.pragma('synchronous = NORMAL');
const pageSize = db.pragma('page_size', { simple: true });
let timer = null;
const tick = () => {
  // BUSY: another process checkpoints, or the store's writers held the lock past the wait; the next tick tries again.
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
    if (passive.log > 0) db.pragma(passive.log * pageSize > workerData.maxWalBytes ? 'wal_checkpoint(TRUNCATE)' : 'wal_checkpoint(RESTART)');
  } catch (error) {
    if (error.code !== 'SQLITE_BUSY' && error.code !== 'SQLITE_LOCKED') throw error;
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.once('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Starts the worker for the WAL-mode file at `path`, whose store connection is `db`: from now
 * on `db` does not checkpoint; `close()` stops the worker.
 */
export class BackgroundCheckpoints {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  /** Set when the worker failed: the store's connection checkpoints inline again. */
  failure: Error | null = null;

  constructor(
    private readonly db: Database.Database,
    path: string,
    options: BackgroundCheckpointOptions = {},
  ) {
    const workerData = {
      driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
      path,
      intervalMs: options.intervalMs ?? 500,
      maxWalBytes: options.maxWalBytes ?? 32 * 1024 * 1024,
      checkpointWaitMs: CHECKPOINT_WAIT_MS,
    };
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
    // The process may end while a checkpoint runs: SQLite's checkpoints survive being cut off.
    this.worker.unref();
    this.worker.once('error', (error) => {
      this.failure = error;
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.db.pragma('wal_autocheckpoint = 0');
  }

  /** Stops the worker once its checkpoint (if one runs) is done; the store's connection checkpoints inline again. */
  async close(): Promise<void> {
    this.worker.postMessage('stop');
    await this.exited;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  }
}
