/**
 * The tag blackboard: every tag keeps every version, nothing is overwritten, so a rejected
 * draft stays readable. Plain, immutable data (JSON-serialisable) so it persists with the
 * snapshot and an unchanged board can be recognised by identity. Tags are names a package
 * or a model chose ("constructor", "__proto__"…): read them only through the functions
 * below, which never look up the prototype chain (see keyed.ts).
 *
 * The context holds bodies only where the next step may need them: the latest version of
 * each tag and the versions of an artifact under review or rejected (a revision reads them).
 * The other versions are not listed one by one: a tag's list starts with one summary,
 * `ArchivedVersions` (how many versions left the context and their characters), so the
 * context stays bounded however many versions a tag gets. Those versions are read from the
 * archive: by the runtime's `history()`, and by the turn actors when a model needs one
 * (`read_blackboard` with a `version`, the earlier parts of the request), see
 * src/core/agents/turns.ts. A tag's version count is its latest version's number.
 */
import type { Artifact } from './artifacts.js';
import { ownValue } from './keyed.js';

export interface TagVersion {
  version: number;
  body: string;
  /** A worker id, "user" for the request the user typed, "app" for tags an app seeded. */
  writtenBy: string;
  artifactId?: string;
  /** When it was written, from the event that wrote it (user events are stamped by send(); a worker's, see the journal). */
  at?: string;
}

/**
 * The versions of a tag whose bodies left the context (they are in the archive), counted:
 * first in the tag's list when there are any.
 */
export interface ArchivedVersions {
  /** How many versions. */
  archived: number;
  /** Characters of their bodies (the index gives the whole request's size). */
  size: number;
}

/**
 * A tag's list: [ArchivedVersions?, ...versions with bodies, oldest first]; the last is the
 * latest version, always held.
 */
export type TagSlot = TagVersion | ArchivedVersions;
export type Blackboard = Record<string, TagSlot[]>;

export interface TagIndexEntry {
  tag: string;
  version: number;
  size: number;
  firstLine: string;
  writtenBy: string;
}

/**
 * The tag that holds what the user asked for; every worker may read it. Each version is one
 * part — the request, then each answer given in intake — and readers get all parts.
 */
export const REQUEST_TAG = 'request';

export const hasBody = (v: TagSlot | undefined): v is TagVersion => v !== undefined && !('archived' in v);

/** A tag's summary of archived versions, if it has one. */
function summaryOf(versions: readonly TagSlot[]): ArchivedVersions | undefined {
  const first = versions[0];
  return first !== undefined && !hasBody(first) ? first : undefined;
}

/** How many versions a tag has (0: no such tag): its latest version's number. */
export function versionCount(board: Blackboard, tag: string): number {
  return latest(board, tag)?.version ?? 0;
}

/**
 * Returns a new board with one more version of `tag`; the old board is untouched and shares
 * every other tag with the new one. Writes only ever append, so this needs no draft (immer's
 * proxies cost many times more here); nested edits such as artifact moves use immer.
 */
export function withVersion(board: Blackboard, tag: string, entry: Omit<TagVersion, 'version'>): { board: Blackboard; version: TagVersion } {
  const versions = ownValue(board, tag) ?? [];
  const last = versions.at(-1);
  const version: TagVersion = { version: (hasBody(last) ? last.version : 0) + 1, ...entry };
  // Spread and a computed key both define own properties, "__proto__" included.
  return { board: { ...board, [tag]: [...versions, version] }, version };
}

/** The latest version of a tag (always held with its body). */
export function latest(board: Blackboard, tag: string): TagVersion | undefined {
  const v = ownValue(board, tag)?.at(-1);
  return hasBody(v) ? v : undefined;
}

/** Whether the tag has this version (held in the context or archived). */
export function hasVersion(board: Blackboard, tag: string, version: number): boolean {
  return Number.isInteger(version) && version >= 1 && version <= versionCount(board, tag);
}

/** A version with its body, when the context holds it. */
export function versionOf(board: Blackboard, tag: string, version: number): TagVersion | undefined {
  const versions = ownValue(board, tag);
  if (!versions) return undefined;
  // Newest first: the latest is the one read most; the list holds a few versions at most.
  for (let i = versions.length - 1; i >= 0; i--) {
    const v = versions[i]!;
    if (hasBody(v) && v.version === version) return v;
  }
  return undefined;
}

/** Versions of a tag whose bodies the context does not hold (in the archive), ascending. */
export function archivedVersions(board: Blackboard, tag: string): number[] {
  const versions = ownValue(board, tag);
  if (!versions || !summaryOf(versions)) return [];
  const held = new Set<number>();
  for (const v of versions) if (hasBody(v)) held.add(v.version);
  const out: number[] = [];
  for (let n = 1, count = versionCount(board, tag); n <= count; n++) if (!held.has(n)) out.push(n);
  return out;
}

/** Whether any tag has versions in the archive. */
export function hasArchivedVersions(board: Blackboard): boolean {
  for (const tag of Object.keys(board)) if (summaryOf(ownValue(board, tag)!)) return true;
  return false;
}

/**
 * The whole request: all its parts, oldest first (undefined before the user wrote one).
 * Parts whose bodies left the context come from `fetched` (the turn actor reads them from
 * the archive); a part found in neither is marked, never silently dropped.
 */
export function requestText(board: Blackboard, fetched?: readonly { tag: string; version: TagVersion }[]): string | undefined {
  const count = versionCount(board, REQUEST_TAG);
  if (count === 0) return undefined;
  const archived = new Map<number, string>();
  for (const f of fetched ?? []) if (f.tag === REQUEST_TAG) archived.set(f.version.version, f.version.body);
  const out: string[] = [];
  for (let n = 1; n <= count; n++) {
    const body = versionOf(board, REQUEST_TAG, n)?.body ?? archived.get(n);
    out.push(body ?? `(part ${n} of the request could not be read from the archive)`);
  }
  return out.join('\n\n');
}

/** Characters of the whole request (its parts and the blank lines between them). */
function requestSize(board: Blackboard): number {
  const parts = ownValue(board, REQUEST_TAG) ?? [];
  let n = 2 * (versionCount(board, REQUEST_TAG) - 1);
  for (const v of parts) n += hasBody(v) ? v.body.length : v.size;
  return n;
}

/**
 * The board with bodies kept only where the context needs them (see the file comment);
 * the same object when nothing changes. Run after every write and artifact move.
 */
export function retainBodies(board: Blackboard, artifacts: readonly Artifact[]): Blackboard {
  const needed = new Set<string>();
  for (const a of artifacts) {
    if (a.status !== 'pending_review' && a.status !== 'rejected') continue;
    for (const [tag, version] of Object.entries(a.tags)) needed.add(`${version}\u0000${tag}`);
  }
  let next: Blackboard | undefined;
  for (const tag of Object.keys(board)) {
    const versions = ownValue(board, tag)!;
    // Most tags hold only their latest version: nothing to look at.
    if (versions.length === 1 || (versions.length === 2 && summaryOf(versions))) continue;
    let leaving = 0;
    for (let i = 0; i < versions.length - 1; i++) {
      const v = versions[i]!;
      if (hasBody(v) && !needed.has(`${v.version}\u0000${tag}`)) leaving++;
    }
    if (leaving === 0) continue;
    const summary = { archived: 0, size: 0, ...summaryOf(versions) };
    const kept: TagSlot[] = [summary];
    for (let i = 0; i < versions.length; i++) {
      const v = versions[i]!;
      if (!hasBody(v)) continue;
      if (i < versions.length - 1 && !needed.has(`${v.version}\u0000${tag}`)) {
        summary.archived++;
        summary.size += v.body.length;
      } else kept.push(v);
    }
    // A computed key defines an own property ("__proto__" included); `next[tag] =` would not.
    next = { ...(next ?? board), [tag]: kept };
  }
  return next ?? board;
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
      size: tag === REQUEST_TAG ? requestSize(board) : body.length,
      firstLine: firstLine.length > FIRST_LINE_MAX ? `${firstLine.slice(0, FIRST_LINE_MAX - 1)}…` : firstLine,
      writtenBy: v.writtenBy,
    };
  });
}
