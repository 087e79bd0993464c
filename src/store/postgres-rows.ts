/** A `sessions` row as PostgresStore reads it, and the StoredSession it becomes. */
import type { StoredSession } from './session-store.js';
import { deadlineOfRow } from './stored-deadline.js';

export interface SessionRow {
  id: string;
  package_id: string | null;
  revision: number;
  snapshot: unknown;
  state: string;
  created_at: Date;
  updated_at: Date;
  owner: string | null;
  /** The session's participants in the order given (the subquery of `sessionColumns`). */
  participants: string[] | null;
  /** The deadline (schema step 9): due time, wait and level, all null when none. */
  due_at: Date | null;
  due_wait: number | null;
  due_level: number | null;
}

/**
 * The columns of a SessionRow, for a SELECT from `S.sessions` (under any alias): the row's
 * own, and its participants from `session_participants` (an index lookup by session).
 */
export function sessionColumns(S: string): string {
  return `id, package_id, revision, snapshot, state, created_at, updated_at, owner, due_at, due_wait, due_level,
    ARRAY(SELECT p.who FROM ${S}.session_participants p WHERE p.session_id = id ORDER BY p.ord) AS participants`;
}

export function toStoredSession(row: SessionRow): StoredSession {
  return {
    id: row.id,
    packageId: row.package_id,
    revision: row.revision,
    snapshot: row.snapshot,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    owner: row.owner,
    participants: row.participants ?? [],
    deadline: deadlineOfRow(row.id, row.due_at?.toISOString(), row.due_wait, row.due_level),
  };
}
