/** A `sessions` row as PostgresStore reads it, and the StoredSession it becomes. */
import type { StoredSession } from './session-store.js';

export interface SessionRow {
  id: string;
  package_id: string | null;
  revision: number;
  snapshot: unknown;
  state: string;
  created_at: Date;
  updated_at: Date;
}

/** The columns of a SessionRow, for a SELECT from `sessions`. */
export const SESSION_COLUMNS = 'id, package_id, revision, snapshot, state, created_at, updated_at';

export function toStoredSession(row: SessionRow): StoredSession {
  return {
    id: row.id,
    packageId: row.package_id,
    revision: row.revision,
    snapshot: row.snapshot,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
