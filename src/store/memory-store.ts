import { ConflictError, InternalError, SessionNotFoundError } from '../core/errors.js';
import { SEND_KEYS_KEPT } from './session-store.js';
import type {
  AppendInput,
  CreateInput,
  SendKeyRecord,
  StoredPackageVersion,
  ArchiveItem,
  ArchiveItemInput,
  JournalEntry,
  JournalEntryInput,
  ListOptions,
  SessionPage,
  SessionStore,
  StoredSession,
} from './session-store.js';
import { checkSessionId } from '../ids.js';
import { listRequest, listsBefore, pageOf, type ListPosition } from './list-page.js';
import { MemoryOutbox } from './memory-outbox.js';
import { deadlineInput, dueRequest, type DueDeadline } from './stored-deadline.js';

interface Row {
  session: StoredSession;
  state: string;
  journal: JournalEntry[];
  /** The archive: `kind key` → items by n. */
  archive: Map<string, Map<number, ArchiveItem>>;
  /** Idempotency keys in journal order (the latest SEND_KEYS_KEPT). */
  keys: Map<string, SendKeyRecord>;
}

/**
 * SessionStore kept in a Map, for tests and throwaway runs. Everything crossing the
 * boundary is deep-copied with structuredClone, so a caller mutating a returned (or
 * passed-in) object can never change what is stored — the same guarantee SQLite gives
 * by serialising to text.
 *
 * @example
 * const store = new MemoryStore();
 * const runtime = createRuntime({ model: new DemoModel(), store });
 * const { sessions, next } = await store.list();
 */
export class MemoryStore implements SessionStore {
  readonly kind = 'memory';
  private readonly rows = new Map<string, Row>();
  private readonly versions = new Map<string, StoredPackageVersion>();
  readonly outbox = new MemoryOutbox();

  async create(session: CreateInput): Promise<StoredSession> {
    checkSessionId(session.id, 'MemoryStore.create');
    const deadline = deadlineInput(session.deadline, session.id) ?? null;
    if (this.rows.has(session.id)) {
      throw new ConflictError(`Session "${session.id}" already exists; pick another id or load the existing session.`);
    }
    const at = new Date().toISOString();
    const stored: StoredSession = {
      id: session.id,
      packageId: session.packageId,
      revision: 1,
      snapshot: structuredClone(session.snapshot),
      createdAt: at,
      updatedAt: at,
      owner: session.owner ?? null,
      participants: [...new Set(session.participants ?? [])],
      deadline,
    };
    const first = toEntry(session.id, 1, at, session.entry);
    const archive = new Map<string, Map<number, ArchiveItem>>();
    addToArchive(archive, archiveItems(session.entry.added, 1));
    const messages = this.outbox.prepare(session.id, 1, at, session.entry.outbox);
    this.keepVersions(session.packageVersions);
    this.rows.set(session.id, { session: stored, state: first.state, journal: [first], archive, keys: new Map() });
    this.outbox.add(messages);
    return structuredClone(stored);
  }

  async load(id: string): Promise<StoredSession | undefined> {
    const row = this.rows.get(id);
    return row ? structuredClone(row.session) : undefined;
  }

  async append(input: AppendInput): Promise<number> {
    const { id, expectedRevision, entries, snapshot, archive = [] } = input;
    const deadline = deadlineInput(input.deadline, id);
    const row = this.rows.get(id);
    if (!row) throw new SessionNotFoundError(id);
    const current = row.session.revision;
    if (current !== expectedRevision) throw revisionConflict(id, current, expectedRevision);

    // Copy everything before touching the row, so a structuredClone failure (e.g. a
    // function in the payload) leaves the session exactly as it was.
    const at = new Date().toISOString();
    const lastSeq = row.journal.length;
    const added = entries.map((entry, i) => toEntry(id, lastSeq + i + 1, at, entry));
    const snapshotCopy = structuredClone(snapshot);
    const items = [...archiveItems(archive, lastSeq), ...entries.flatMap((entry, i) => archiveItems(entry.added, lastSeq + i + 1))];
    for (const item of items) {
      if (row.archive.get(`${item.kind} ${item.key}`)?.has(item.n))
        throw new InternalError(`Archive of session "${id}" already holds ${item.kind} ${item.key} #${item.n}.`);
    }
    const messages = entries.flatMap((entry, i) => this.outbox.prepare(id, lastSeq + i + 1, at, entry.outbox));

    row.journal.push(...added);
    addToArchive(row.archive, items);
    this.keepVersions(input.packageVersions);
    entries.forEach((entry, i) => {
      if (!entry.sendKey) return;
      row.keys.set(entry.sendKey.key, { ...entry.sendKey, seq: lastSeq + i + 1, result: null });
      // A Map keeps insertion order, which is journal order: the oldest keys go first.
      for (const key of row.keys.keys()) {
        if (row.keys.size <= SEND_KEYS_KEPT) break;
        row.keys.delete(key);
      }
    });
    row.session = {
      ...row.session,
      revision: current + 1,
      snapshot: snapshotCopy,
      updatedAt: at,
      deadline: deadline === undefined ? row.session.deadline : deadline,
    };
    row.state = added.at(-1)?.state ?? row.state;
    this.outbox.add(messages);
    return current + 1;
  }

  async packageVersion(hash: string): Promise<StoredPackageVersion | undefined> {
    const version = this.versions.get(hash);
    return version ? { ...version } : undefined;
  }

  async sendKey(id: string, key: string): Promise<SendKeyRecord | undefined> {
    const record = this.rows.get(id)?.keys.get(key);
    return record ? structuredClone(record) : undefined;
  }

  async saveSendResult(id: string, key: string, result: unknown): Promise<void> {
    const record = this.rows.get(id)?.keys.get(key);
    if (record) record.result = structuredClone(result);
  }

  private keepVersions(versions: readonly StoredPackageVersion[] | undefined): void {
    for (const v of versions ?? []) if (!this.versions.has(v.hash)) this.versions.set(v.hash, { hash: v.hash, packageId: v.packageId, json: v.json });
  }

  async journal(id: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const all = this.rows.get(id)?.journal ?? [];
    const afterSeq = options.afterSeq ?? 0;
    const from = all.filter((entry) => entry.seq > afterSeq);
    const page = options.limit === undefined ? from : from.slice(0, Math.max(0, Math.floor(options.limit)));
    return structuredClone(page);
  }

  async archived(id: string, kind: ArchiveItemInput['kind'], key: string, options: { from?: number; to?: number } = {}): Promise<ArchiveItem[]> {
    const items = this.rows.get(id)?.archive.get(`${kind} ${key}`);
    if (!items) return [];
    const from = options.from ?? -Infinity;
    const to = options.to ?? Infinity;
    return structuredClone([...items.values()].filter((item) => item.n >= from && item.n <= to).sort((a, b) => a.n - b.n));
  }

  async list(options?: ListOptions): Promise<SessionPage> {
    const { limit, after } = listRequest(options);
    const access = options?.visibleTo;
    const rows = [...this.rows.values()]
      .filter((row) => !after || listsBefore(after, positionOf(row)))
      .filter((row) => !access || row.session.owner === access.owner || row.session.participants.some((p) => access.participants.includes(p)))
      .sort((a, b) => (listsBefore(positionOf(a), positionOf(b)) ? -1 : 1))
      .slice(0, limit + 1);
    return pageOf(rows, limit, positionOf, ({ session, state }) => ({
      id: session.id,
      packageId: session.packageId,
      revision: session.revision,
      state,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      owner: session.owner,
      participants: [...session.participants],
    }));
  }

  /** Reads every session (a Map has no index): fine for tests and throwaway runs. */
  async dueDeadlines(now: string, limit: number): Promise<DueDeadline[]> {
    const request = dueRequest(now, limit);
    const due: DueDeadline[] = [];
    for (const { session } of this.rows.values()) {
      if (session.deadline && session.deadline.dueAt <= request.now) due.push({ sessionId: session.id, deadline: { ...session.deadline } });
    }
    // Oldest due first, ties by id: what the SQL stores' ORDER BY due_at, id gives.
    due.sort((a, b) => (a.deadline.dueAt === b.deadline.dueAt ? compare(a.sessionId, b.sessionId) : compare(a.deadline.dueAt, b.deadline.dueAt)));
    return due.slice(0, request.limit);
  }

  async close(): Promise<void> {
    // Nothing to release; the data lives as long as the instance.
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const positionOf = (row: Row): ListPosition => ({ updatedAt: row.session.updatedAt, id: row.session.id });

function toEntry(sessionId: string, seq: number, at: string, input: JournalEntryInput): JournalEntry {
  return {
    sessionId,
    seq,
    at,
    kind: input.kind,
    type: input.type,
    payload: structuredClone(input.payload),
    state: input.state,
  };
}

/** Deep copies of the items, stamped with the journal entry that added them. */
function archiveItems(items: ArchiveItemInput[] | undefined, entrySeq: number): ArchiveItem[] {
  return (items ?? []).map((item) => ({ kind: item.kind, key: item.key, n: item.n, value: structuredClone(item.value), entrySeq }));
}

function addToArchive(archive: Map<string, Map<number, ArchiveItem>>, items: ArchiveItem[]): void {
  for (const item of items) {
    const k = `${item.kind} ${item.key}`;
    let byN = archive.get(k);
    if (!byN) archive.set(k, (byN = new Map()));
    byN.set(item.n, item);
  }
}

/** Shared wording with SqliteStore, so callers and users see one message for one situation. */
export function revisionConflict(id: string, current: number, expected: number): ConflictError {
  return new ConflictError(
    `Session "${id}" is at revision ${current}, but this write expected revision ${expected}: ` +
      `another writer saved it first. Nothing was written; reload the session and send again.`,
  );
}
