/**
 * The session's history outside its snapshot. The context keeps bounded windows of the
 * transcripts and only the tag bodies the next steps need; everything a transition added —
 * each transcript message, each tag version — is taken from the context right after the
 * transition (a window never cuts what the transition just appended, see
 * src/core/machines/transcript.ts) and archived: by the store, in the same transaction as the
 * journal entry; without a store, here, in memory, per session.
 */
import { hasBody, versionOf, type TagSlot, type TagVersion } from '../core/blackboard/blackboard.js';
import type { SessionContext } from '../core/machines/session.context.js';
import { firstNumber, type Transcript } from '../core/machines/transcript.js';
import type { ChatMessage } from '../core/models/model.js';
import type { ArchiveItem, ArchiveItemInput } from '../store/session-store.js';

export type TranscriptName = 'manager' | 'worker';

/** Where a fan-out branch's conversation is archived: by the manager's round that proposed the fan-out, and the branch's item. */
export const branchTranscriptKey = (team: { since: number }, item: string): string => `worker:${team.since}:${item}`;
export const TRANSCRIPT_NAMES: readonly TranscriptName[] = ['manager', 'worker'];

function addedMessages(name: string, before: Transcript | undefined, after: Transcript, out: ArchiveItemInput[]): void {
  const from = Math.max(before?.total ?? 0, firstNumber(after));
  const first = firstNumber(after);
  for (let n = from; n < after.total; n++) out.push({ kind: 'message', key: name, n, value: after.messages[n - first]! });
}

/**
 * What `after` holds that `before` did not: new messages (by number) and new tag versions.
 * `before` null: everything `after` holds (a session whose history was never archived).
 */
export function historyItems(before: SessionContext | null, after: SessionContext): ArchiveItemInput[] {
  const out: ArchiveItemInput[] = [];
  if (before?.transcripts !== after.transcripts) {
    for (const name of TRANSCRIPT_NAMES) {
      const b = before?.transcripts[name];
      if (b !== after.transcripts[name]) addedMessages(name, b, after.transcripts[name], out);
    }
  }
  // A fan-out's branches each keep a conversation of their own (team.ts), archived under `worker:<item>`.
  for (const branch of after.team?.branches ?? []) {
    const b = before?.team?.branches.find((x) => x.item === branch.item)?.transcript;
    if (b !== branch.transcript) addedMessages(branchTranscriptKey(after.team!, branch.item), b, branch.transcript, out);
  }
  if (before?.blackboard !== after.blackboard) {
    for (const tag of Object.keys(after.blackboard)) {
      const versions = after.blackboard[tag]!;
      const old = before && Object.hasOwn(before.blackboard, tag) ? before.blackboard[tag]! : undefined;
      if (old === versions) continue;
      // Versions are only ever appended: the new ones are numbered after the old latest.
      const known = latestNumber(old);
      for (const v of versions) if (hasBody(v) && v.version > known) out.push({ kind: 'version', key: tag, n: v.version, value: v });
    }
  }
  return out;
}

/**
 * What left the context between `before` and `after`: messages cut from a window (or a reset
 * one) and tag bodies the board stopped holding. The in-memory archive of a session without
 * a store keeps only these — the context holds the rest — so a short session pays nothing
 * for its archive.
 */
export function droppedItems(before: SessionContext, after: SessionContext): ArchiveItemInput[] {
  const out: ArchiveItemInput[] = [];
  if (before.transcripts !== after.transcripts) {
    for (const name of TRANSCRIPT_NAMES) {
      const b = before.transcripts[name];
      const a = after.transcripts[name];
      if (b === a) continue;
      const first = firstNumber(b);
      const end = Math.min(b.total, firstNumber(a));
      for (let n = first; n < end; n++) out.push({ kind: 'message', key: name, n, value: b.messages[n - first]! });
    }
  }
  for (const branch of before.team?.branches ?? []) {
    const b = branch.transcript;
    const a = after.team?.branches.find((x) => x.item === branch.item)?.transcript;
    if (b === a) continue;
    const first = firstNumber(b);
    const end = a ? Math.min(b.total, firstNumber(a)) : b.total;
    for (let n = first; n < end; n++) out.push({ kind: 'message', key: branchTranscriptKey(before.team!, branch.item), n, value: b.messages[n - first]! });
  }
  if (before.blackboard !== after.blackboard) {
    for (const tag of Object.keys(before.blackboard)) {
      const old = before.blackboard[tag]!;
      const now = Object.hasOwn(after.blackboard, tag) ? after.blackboard[tag]! : undefined;
      if (now === old || !now) continue;
      for (const v of old) if (hasBody(v) && !versionOf(after.blackboard, tag, v.version)) out.push({ kind: 'version', key: tag, n: v.version, value: v });
    }
  }
  return out;
}

/** The number of a tag list's latest version (0: no list). */
function latestNumber(versions: readonly TagSlot[] | undefined): number {
  const last = versions?.at(-1);
  return hasBody(last) ? last.version : 0;
}

/** Reads a session's archive, whichever holds it. */
export type ArchiveReader = (kind: ArchiveItemInput['kind'], key: string, options?: { from?: number; to?: number }) => Promise<ArchiveItem[]>;

/** The archive of a session without a store. */
export class MemoryArchive {
  private readonly items = new Map<string, Map<number, ArchiveItem>>();
  private entries = 0;

  add(items: readonly ArchiveItemInput[]): void {
    if (items.length === 0) return;
    this.entries++;
    for (const item of items) {
      const k = `${item.kind} ${item.key}`;
      let byN = this.items.get(k);
      if (!byN) this.items.set(k, (byN = new Map()));
      byN.set(item.n, { ...item, entrySeq: this.entries });
    }
  }

  read: ArchiveReader = async (kind, key, options = {}) => {
    const byN = this.items.get(`${kind} ${key}`);
    if (!byN) return [];
    const from = options.from ?? -Infinity;
    const to = options.to ?? Infinity;
    return [...byN.values()].filter((i) => i.n >= from && i.n <= to).sort((a, b) => a.n - b.n);
  };
}

/** A whole transcript: the archive's messages, and the window's where the archive lacks them. */
export async function fullTranscript(read: ArchiveReader, name: TranscriptName, window: Transcript | undefined): Promise<ChatMessage[]> {
  const byN = new Map<number, ChatMessage>();
  for (const item of await read('message', name)) byN.set(item.n, item.value as ChatMessage);
  if (window) {
    const first = firstNumber(window);
    window.messages.forEach((m, i) => {
      if (!byN.has(first + i)) byN.set(first + i, m);
    });
  }
  return [...byN.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
}

/** One tag version with its body: from the context when it holds it, else from the archive. */
export async function findTagVersion(read: ArchiveReader, context: SessionContext | undefined, tag: string, version: number): Promise<TagVersion | undefined> {
  const held = context ? versionOf(context.blackboard, tag, version) : undefined;
  if (held) return held;
  const [item] = await read('version', tag, { from: version, to: version });
  return item?.value as TagVersion | undefined;
}

/** Every version of a tag with its body, oldest first. */
export async function allTagVersions(read: ArchiveReader, context: SessionContext | undefined, tag: string): Promise<TagVersion[]> {
  const byN = new Map<number, TagVersion>();
  for (const item of await read('version', tag)) byN.set(item.n, item.value as TagVersion);
  if (context && Object.hasOwn(context.blackboard, tag)) for (const v of context.blackboard[tag]!) if (hasBody(v) && !byN.has(v.version)) byN.set(v.version, v);
  return [...byN.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

/** Archived versions of a tag, in one range read. */
export async function readVersions(read: ArchiveReader, tag: string, versions: readonly number[]): Promise<TagVersion[]> {
  if (versions.length === 0) return [];
  const wanted = new Set(versions);
  const items = await read('version', tag, { from: Math.min(...versions), to: Math.max(...versions) });
  return items.filter((i) => wanted.has(i.n)).map((i) => i.value as TagVersion);
}
