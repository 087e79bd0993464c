/**
 * Paging of SessionStore.list(), shared by every store: the options checked, the cursor
 * (an opaque string holding the last row's position, `updated_at` and `id`) encoded and
 * decoded, a page cut from the rows a store read, and `listAll` for callers that need
 * every session (`steward list`, the inspector).
 *
 * The position is kept exactly as the store compares it (PostgreSQL: microseconds), so no
 * row is skipped or repeated at a page boundary.
 */
import * as z from 'zod';
import { InvalidCursorError, UserError } from '../core/errors.js';
import { sessionIdProblem } from '../ids.js';
import type { ListOptions, SessionPage, SessionStore, SessionSummary } from './session-store.js';

export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;
/** Longer than any cursor a store makes (a 200-character id, base64url): more is not one. */
export const CURSOR_MAX_CHARS = 1200;

/** Where a page ends: the last row's sort key. */
export interface ListPosition {
  /** ISO-8601 UTC, with the precision the store keeps (milliseconds; PostgreSQL: microseconds). */
  updatedAt: string;
  id: string;
}

export interface ListRequest {
  limit: number;
  after: ListPosition | null;
}

// A real instant PostgreSQL accepts too (years 1000–9999, a day that exists in its month).
const TIMESTAMP = /^[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const isInstant = (text: string) => {
  const seconds = `${text.slice(0, 19)}Z`;
  const parsed = new Date(seconds);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === text.slice(0, 19);
};

const PositionSchema = z.tuple([z.string().regex(TIMESTAMP).refine(isInstant), z.string().refine((id) => sessionIdProblem(id) === null)]);

const badCursor = (why: string) =>
  new InvalidCursorError(`The list cursor ${why}: pass the \`next\` of the previous page unchanged, or leave it out to start from the first page.`);

// base64url through btoa/atob and TextEncoder, not Buffer: MemoryStore also runs in browsers.
function toBase64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): string {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

export function encodeCursor(position: ListPosition): string {
  return toBase64url(JSON.stringify([position.updatedAt, position.id]));
}

export function decodeCursor(cursor: unknown): ListPosition {
  if (typeof cursor !== 'string') throw badCursor(`is ${typeof cursor}, not a string`);
  if (cursor.length === 0 || cursor.length > CURSOR_MAX_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw badCursor('is not one a store handed out');
  let value: unknown;
  try {
    value = JSON.parse(fromBase64url(cursor));
  } catch {
    throw badCursor('is garbled');
  }
  const parsed = PositionSchema.safeParse(value);
  if (!parsed.success) throw badCursor('is garbled');
  return { updatedAt: parsed.data[0], id: parsed.data[1] };
}

/** The options of a list() call, checked: a wrong limit is a UserError, a wrong cursor an InvalidCursorError. */
export function listRequest(options: ListOptions = {}): ListRequest {
  const limit = options.limit ?? LIST_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
    throw new UserError(
      `list: limit must be a whole number from 1 to ${LIST_MAX_LIMIT} (got ${String(options.limit)}); to read every session, page with \`next\` (listAll does).`,
    );
  }
  const after = options.after === undefined || options.after === null ? null : decodeCursor(options.after);
  return { limit, after };
}

/**
 * The page from the rows a store read in list order: up to `limit + 1` of them (one more
 * than the page, to know whether another page follows without a second query).
 */
export function pageOf<R>(rows: R[], limit: number, position: (row: R) => ListPosition, summary: (row: R) => SessionSummary): SessionPage {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return { sessions: shown.map(summary), next: rows.length > limit && last ? encodeCursor(position(last)) : null };
}

/** True when `a` sorts before `b` in list order (newer first; ties: the greater id first). */
export function listsBefore(a: ListPosition, b: ListPosition): boolean {
  return a.updatedAt > b.updatedAt || (a.updatedAt === b.updatedAt && a.id > b.id);
}

/**
 * Every session, page by page (`pageSize` at a time), most recently updated first. A
 * session written during the walk may be missed or moved; a fresh call sees it.
 *
 * @example
 * for (const s of await listAll(store)) console.log(s.id, s.state, s.updatedAt);
 */
export async function listAll(store: SessionStore, pageSize = LIST_MAX_LIMIT): Promise<SessionSummary[]> {
  const all: SessionSummary[] = [];
  let after: string | null = null;
  do {
    const page: SessionPage = await store.list({ limit: pageSize, after });
    all.push(...page.sessions);
    after = page.next;
  } while (after !== null);
  return all;
}
