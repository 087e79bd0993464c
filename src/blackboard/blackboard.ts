/**
 * The tag blackboard: every tag keeps every version, nothing is overwritten, so a rejected
 * draft stays readable. Plain, immutable data (JSON-serialisable) so it persists with the
 * snapshot and an unchanged board can be recognised by identity. Tags are names a package
 * or a model chose ("constructor", "__proto__"…): read them only through the functions
 * below, which never look up the prototype chain (see keyed.ts).
 *
 * The context holds bodies only where the next step may need them: the latest version of
 * each tag and the versions of an artifact under review or rejected (a revision reads them).
 * Every other version keeps its place in the list as an `ArchivedTagVersion` — number, size,
 * author, artifact — and its body is read from the archive: by the runtime's `history()`, and
 * by the turn actors when a model needs it (`read_blackboard` with a `version`, the earlier
 * parts of the request), see src/agents/turns.ts.
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

/** A version whose body left the context (it is in the archive). */
export interface ArchivedTagVersion {
  version: number;
  writtenBy: string;
  artifactId?: string;
  /** Characters of the body. */
  size: number;
  archived: true;
}

export type TagSlot = TagVersion | ArchivedTagVersion;
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

/** The latest version of a tag (always held with its body). */
export function latest(board: Blackboard, tag: string): TagVersion | undefined {
  const v = ownValue(board, tag)?.at(-1);
  return hasBody(v) ? v : undefined;
}

/** A version as the context holds it: with its body, or archived (body in the archive). */
export function slotOf(board: Blackboard, tag: string, version: number): TagSlot | undefined {
  return ownValue(board, tag)?.[version - 1];
}

/** A version with its body, when the context holds it. */
export function versionOf(board: Blackboard, tag: string, version: number): TagVersion | undefined {
  const v = slotOf(board, tag, version);
  return hasBody(v) ? v : undefined;
}

/** Versions of a tag whose bodies the context does not hold. */
export function archivedVersions(board: Blackboard, tag: string): number[] {
  const out: number[] = [];
  for (const v of ownValue(board, tag) ?? []) if (!hasBody(v)) out.push(v.version);
  return out;
}

/**
 * The whole request: all its parts, oldest first (undefined before the user wrote one).
 * Parts whose bodies left the context come from `fetched` (the turn actor reads them from
 * the archive); a part found in neither is marked, never silently dropped.
 */
export function requestText(board: Blackboard, fetched?: readonly { tag: string; version: TagVersion }[]): string | undefined {
  const parts = ownValue(board, REQUEST_TAG);
  if (!parts) return undefined;
  return parts.map((v) => {
    if (hasBody(v)) return v.body;
    const found = fetched?.find((f) => f.tag === REQUEST_TAG && f.version.version === v.version);
    return found ? found.version.body : `(part ${v.version} of the request could not be read from the archive)`;
  }).join('\n\n');
}

/** Characters of the whole request (its parts and the blank lines between them). */
function requestSize(board: Blackboard): number {
  const parts = ownValue(board, REQUEST_TAG) ?? [];
  let n = 2 * (parts.length - 1);
  for (const v of parts) n += hasBody(v) ? v.body.length : v.size;
  return n;
}

function archivedOf(v: TagVersion): ArchivedTagVersion {
  return { version: v.version, writtenBy: v.writtenBy, ...(v.artifactId ? { artifactId: v.artifactId } : {}), size: v.body.length, archived: true };
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
    let changed: TagSlot[] | undefined;
    for (let i = 0; i < versions.length - 1; i++) {
      const v = versions[i]!;
      if (!hasBody(v) || needed.has(`${v.version}\u0000${tag}`)) continue;
      (changed ??= [...versions])[i] = archivedOf(v);
    }
    // A computed key defines an own property ("__proto__" included); `next[tag] =` would not.
    if (changed) next = { ...(next ?? board), [tag]: changed };
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
