/**
 * The tag blackboard: every tag keeps every version, nothing is overwritten, so a rejected
 * draft stays readable. Plain, immutable data (JSON-serialisable) so it persists with the
 * snapshot and an unchanged board can be recognised by identity. Tags are names a package
 * or a model chose ("constructor", "__proto__"…): read them only through the functions
 * below, which never look up the prototype chain (see keyed.ts).
 */
import { ownValue } from './keyed.js';

export interface TagVersion {
  version: number;
  body: string;
  /** A worker id, or "user" for the request the user typed. */
  writtenBy: string;
  artifactId?: string;
  /** When it was written, from the event that wrote it (user events are stamped by send(); a worker's, see the journal). */
  at?: string;
}

export type Blackboard = Record<string, TagVersion[]>;

export interface TagIndexEntry {
  tag: string;
  version: number;
  size: number;
  firstLine: string;
  writtenBy: string;
}

/** The tag that holds what the user asked for; every worker may read it. */
export const REQUEST_TAG = 'request';

/**
 * Returns a new board with one more version of `tag`; the old board is untouched and shares
 * every other tag with the new one. Writes only ever append, so this needs no draft (immer's
 * proxies cost ~30× more here, measured); nested edits such as artifact moves use immer.
 */
export function withVersion(board: Blackboard, tag: string, entry: Omit<TagVersion, 'version'>): { board: Blackboard; version: TagVersion } {
  const versions = ownValue(board, tag) ?? [];
  const version: TagVersion = { version: versions.length + 1, ...entry };
  // Spread and a computed key both define own properties, "__proto__" included.
  return { board: { ...board, [tag]: [...versions, version] }, version };
}

export function latest(board: Blackboard, tag: string): TagVersion | undefined {
  const versions = ownValue(board, tag);
  return versions?.[versions.length - 1];
}

export function versionOf(board: Blackboard, tag: string, version: number): TagVersion | undefined {
  return ownValue(board, tag)?.[version - 1];
}

const FIRST_LINE_MAX = 80;

/** What the manager sees instead of bodies: enough to decide what to read. */
export function blackboardIndex(board: Blackboard): TagIndexEntry[] {
  return Object.keys(board).map((tag) => {
    const v = latest(board, tag)!;
    // indexOf/slice rather than trimStart().split(): this runs for every tag on every
    // blackboard write, and the split allocated an array per tag.
    const body = v.body;
    let start = 0;
    while (start < body.length && body.charCodeAt(start) <= 32) start++;
    const end = body.indexOf('\n', start);
    const firstLine = body.slice(start, end < 0 ? body.length : end).trimEnd();
    return {
      tag,
      version: v.version,
      size: v.body.length,
      firstLine: firstLine.length > FIRST_LINE_MAX ? `${firstLine.slice(0, FIRST_LINE_MAX - 1)}…` : firstLine,
      writtenBy: v.writtenBy,
    };
  });
}
