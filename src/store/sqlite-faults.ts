/**
 * SQLite's failures as StoreErrors that say what happened and what to do, naming the file:
 * "database is locked" after a silent wait, "unable to open database file" for a read-only
 * folder, or "disk I/O error" for a full disk do neither.
 */
import { StoreError, StewardError } from '../core/errors.js';

/** Codes of SQLite (and of the file system, when opening) mapped to a StoreError; anything else is returned as it is. */
export function storeFault(error: unknown, path: string, busyTimeoutMs: number): unknown {
  if (StewardError.isInstance(error)) return error;
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== 'string') return error;
  const file = `"${path}"`;
  const cause = { cause: error };
  // By its code, not `instanceof`: better-sqlite3 is an optional dependency, loaded only when a store opens.
  if (code.startsWith('SQLITE_')) {
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      return new StoreError(
        'store_locked',
        `The database ${file} is locked by another process (waited ${busyTimeoutMs} ms): another Steward ` +
          `process that is writing, or a program holding it open. Wait until it finishes and try again, or use ` +
          `another database file.`,
        path,
        cause,
      );
    }
    if (code.startsWith('SQLITE_READONLY')) {
      return new StoreError(
        'store_read_only',
        `The database ${file} is read-only for this process (the file or its folder is not writable): ` +
          `nothing was saved. Make both writable, or copy the file somewhere writable and use the copy; a ` +
          `store opened read-only can still be read.`,
        path,
        cause,
      );
    }
    if (code === 'SQLITE_NOTADB') {
      return new StoreError('store_corrupt', `${file} is not an SQLite database (not a Steward store). Use another database file.`, path, cause);
    }
    if (code.startsWith('SQLITE_CORRUPT')) {
      return new StoreError(
        'store_corrupt',
        `The database ${file} is malformed (damaged on disk). Restore it from a backup, or try \`sqlite3 ` +
          `${path} .recover\` into a new file; or use another database file to start afresh.`,
        path,
        cause,
      );
    }
    if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC') {
      // SQLite reports a full tmpfs or disk as SQLITE_FULL, sometimes as a failed write.
      return new StoreError(
        'store_full',
        `The disk holding ${file} is full (or the file hit its size limit): the last change was not saved, ` +
          `the session keeps its last saved state. Free some space and try again.`,
        path,
        cause,
      );
    }
    if (code === 'SQLITE_CANTOPEN') return cannotOpen(path, error);
    if (code.startsWith('SQLITE_IOERR')) {
      return new StoreError(
        'store_io_error',
        `Reading or writing ${file} failed (${(error as Error).message}, ${code}): check the disk and the file system, then try again.`,
        path,
        cause,
      );
    }
    return error;
  }
  if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') {
    return new StoreError(
      'store_read_only',
      `Cannot create the folder of ${file} (${code}): the location is not writable. Pick a writable location.`,
      path,
      cause,
    );
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    return new StoreError(
      'store_unavailable',
      `Cannot create the folder of ${file}: part of the path is a file, not a folder. Pick another path.`,
      path,
      cause,
    );
  }
  if (code === 'ENOSPC') {
    return new StoreError('store_full', `The disk holding ${file} is full. Free some space and try again.`, path, cause);
  }
  return error;
}

function cannotOpen(path: string, error: unknown): StoreError {
  return new StoreError(
    'store_unavailable',
    `Cannot open the database "${path}": its folder may be missing or not writable (SQLite needs to ` +
      `create files beside it). Check the path and its permissions, or use another database file.`,
    path,
    { cause: error },
  );
}
