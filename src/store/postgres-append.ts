/**
 * The one statement of a PostgresStore write (`append`): the session's new snapshot, its
 * journal entries, what they archived, the package versions, send keys and webhook messages
 * it pins, its deadline — and, for a write that starts a run, the lease it runs under
 * (`grant`, LeaseOps.appendAcquiring).
 *
 * The UPDATE's WHERE is the revision check: a concurrent writer waits for the row's lock,
 * then re-checks the revision and matches nothing. A plain write is fenced by the lease it
 * names (or, naming none, by nobody holding one; fenceSql). A granting write names none: it
 * locks the row, takes the lease only if nobody holds an unexpired one (the upsert acquireLease
 * makes), and updates only with that grant. When the revision moved (another process wrote
 * the session since this one last did), the grant still stands and the session comes back as
 * stored now, as acquireAndLoad would read it: the writer starts over from it without a
 * second statement.
 */
import { fenceSql, HOLDER_COLUMNS, processOf, REGRANT, releaseSql } from './postgres-leases.js';
import { DEFER_FLUSH } from './postgres-prepared.js';
import { sessionColumns } from './postgres-rows.js';
import { SEND_KEYS_KEPT, type AppendInput, type ArchiveItemInput, type StoredPackageVersion } from './session-store.js';
import { toJson } from './store-json.js';
import { deadlineInput } from './stored-deadline.js';
import { outboxColumns } from './postgres-outbox.js';

/** The lease a write that starts a run takes: its owner, for how long, and the process recorded with it (JSON or null). */
export interface WriteGrant {
  owner: string;
  ms: number;
  process: string | null;
}

/** The write's statement and parameters; `grant`: the write takes the lease (see the top of this file). */
export function appendStatement(S: string, input: AppendInput, options: { grant: WriteGrant | null; deferFlush: boolean }): { sql: string; params: unknown[] } {
  const { id, expectedRevision, entries, snapshot, archive = [] } = input;
  const { grant } = options;
  // Serialise before talking to the server: a bad value fails before anything is locked.
  const json = toJson(snapshot, `the snapshot of session "${id}"`);
  const deadline = deadlineInput(input.deadline, id);
  const payloads = entries.map((e) => toJson(e.payload, `the payload of "${e.type}" in session "${id}"`));
  // What the entries added (and `archive`, tied to no new entry: ordinal 0) goes to the
  // archive in the same statement, numbered by the entry that added it.
  const added = archiveColumns(id, [
    ...archive.map((item) => ({ item, ord: 0 })),
    ...entries.flatMap((e, i) => (e.added ?? []).map((item) => ({ item, ord: i + 1 }))),
  ]);
  // The lease is the first fence ($15, $16): a holder whose lease expired commits nothing;
  // the last write of a run may give it up in the same statement ($33). A granting write
  // is fenced by its own grant instead ($34–$37).
  // The deadline is set ($29 true: to $30–$32, null clearing it) or kept, behind the same fences.
  const fence = grant ? 'EXISTS (SELECT 1 FROM g)' : fenceSql(S, '$15', '$16');
  const granting = grant
    ? `s AS (
        SELECT ${sessionColumns(S)} FROM ${S}.sessions WHERE id = $1 FOR UPDATE
      ), g AS (
        INSERT INTO ${S}.leases AS l (session_id, owner, token, expires_at, process)
        SELECT s.id, $34, 1, now() + CASE WHEN $37::boolean AND s.revision = $2 THEN 0 ELSE $35::bigint END * interval '1 millisecond', ${processOf('$36::jsonb', '1')} FROM s
        ON CONFLICT (session_id) DO UPDATE SET ${REGRANT}
        WHERE l.expires_at <= now()
        RETURNING token
      ), `
    : '';
  const flush = options.deferFlush ? DEFER_FLUSH : '';
  // A granting write answers in every case: the new revision and the lease; or, not written,
  // the session as stored now (granted) or who holds its lease (not granted).
  const answer = grant
    ? `SELECT (SELECT revision FROM u) AS written, (SELECT token FROM g) AS lease_token, x.*, h.holder
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (SELECT s.* FROM s WHERE NOT EXISTS (SELECT 1 FROM u)) x ON true
       LEFT JOIN LATERAL (
         SELECT to_jsonb(hh) AS holder FROM (
           SELECT ${HOLDER_COLUMNS} FROM ${S}.leases WHERE session_id = $1 AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM g)
         ) hh
       ) h ON true${flush}`
    : `SELECT revision FROM u${flush}`;
  const sql = `
      WITH ${granting}u AS (
        UPDATE ${S}.sessions SET revision = revision + 1, last_seq = last_seq + $3, snapshot = $4::json,
          state = COALESCE($5, state), updated_at = now(), touched = nextval('${S}.write_order'),
          due_at = CASE WHEN $29::boolean THEN $30::timestamptz ELSE due_at END,
          due_wait = CASE WHEN $29::boolean THEN $31::integer ELSE due_wait END,
          due_level = CASE WHEN $29::boolean THEN $32::integer ELSE due_level END
        WHERE id = $1 AND revision = $2 AND ${fence}
        RETURNING revision, last_seq - $3 AS base, updated_at
      ), j AS (
        INSERT INTO ${S}.journal (session_id, seq, at, kind, type, payload, state)
        SELECT $1, u.base + e.ord, u.updated_at, e.kind, e.type, e.payload::json, e.state
        FROM u, unnest($6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS e(kind, type, payload, state, ord)
      ), a AS (
        INSERT INTO ${S}.archive (session_id, kind, key, n, entry_seq, value)
        SELECT $1, x.kind, x.key, x.n, u.base + x.ord, x.value::json
        FROM u, unnest($10::text[], $11::text[], $12::int[], $13::int[], $14::text[]) AS x(kind, key, n, ord, value)
      ), v AS (
        INSERT INTO ${S}.package_versions (hash, package_id, content)
        SELECT x.hash, x.package_id, x.content FROM u, unnest($17::text[], $18::text[], $19::text[]) AS x(hash, package_id, content)
        ON CONFLICT (hash) DO NOTHING
      ), k AS (
        INSERT INTO ${S}.send_keys (session_id, key, fingerprint, seq)
        SELECT $1, x.key, x.fingerprint, u.base + x.ord FROM u, unnest($20::text[], $21::text[], $22::int[]) AS x(key, fingerprint, ord)
      ), p AS (
        -- The statement sees the keys as they were before it: keep $23 of those beside the new ones.
        DELETE FROM ${S}.send_keys WHERE session_id = $1 AND cardinality($20::text[]) > 0 AND EXISTS (SELECT 1 FROM u)
          AND seq <= (SELECT seq FROM ${S}.send_keys WHERE session_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $23)
      ), r AS (
        -- The lease given up with the write ($33), as releaseLease would: only once the write is made.
        ${releaseSql(S, '$15', '$16')} AND $33::boolean AND EXISTS (SELECT 1 FROM u)
      ), o AS (
        INSERT INTO ${S}.webhook_outbox (id, receiver, session_id, entry_seq, type, payload, created_at)
        SELECT x.id, x.receiver, $1, u.base + x.ord, x.type, x.payload::json, u.updated_at
        FROM u, unnest($24::text[], $25::text[], $26::text[], $27::text[], $28::int[]) AS x(id, receiver, type, payload, ord)
      )
      ${answer}`;
  const versions = versionColumns(input.packageVersions);
  const keyed = entries.flatMap((e, i) => (e.sendKey ? [{ ...e.sendKey, ord: i + 1 }] : []));
  const outbox = outboxColumns(
    id,
    entries.flatMap((e, i) => (e.outbox ?? []).map((input) => ({ input, ord: i + 1 }))),
  );
  const lease = grant ? undefined : input.lease;
  const release = input.releaseLease === true && lease !== undefined;
  const params: unknown[] = [
    id,
    expectedRevision,
    entries.length,
    json,
    entries.at(-1)?.state ?? null,
    entries.map((e) => e.kind),
    entries.map((e) => e.type),
    payloads,
    entries.map((e) => e.state),
    added.kinds,
    added.keys,
    added.ns,
    added.ords,
    added.values,
    lease?.owner ?? null,
    lease?.token ?? null,
    versions.hashes,
    versions.packageIds,
    versions.contents,
    keyed.map((k) => k.key),
    keyed.map((k) => k.fingerprint),
    keyed.map((k) => k.ord),
    Math.max(0, SEND_KEYS_KEPT - keyed.length),
    outbox.ids,
    outbox.receivers,
    outbox.types,
    outbox.payloads,
    outbox.ords,
    deadline !== undefined,
    deadline?.dueAt ?? null,
    deadline?.wait ?? null,
    deadline?.level ?? null,
    release,
    // A granting write at rest ($37) gives its grant up at once when it is made: it took it only to be checked, in one statement.
    ...(grant ? [grant.owner, grant.ms, grant.process, input.releaseLease === true] : []),
  ];
  return { sql, params };
}

/** Archive items as the parallel arrays a statement unnests; values serialised (a bad one fails here). */
export function archiveColumns(id: string, items: { item: ArchiveItemInput; ord: number }[]) {
  return {
    kinds: items.map(({ item }) => item.kind),
    keys: items.map(({ item }) => item.key),
    ns: items.map(({ item }) => item.n),
    ords: items.map(({ ord }) => ord),
    values: items.map(({ item }) => toJson(item.value, `the archived ${item.kind} ${item.key} #${item.n} of session "${id}"`)),
  };
}

/** Package versions as the parallel arrays a statement unnests. */
export function versionColumns(versions: readonly StoredPackageVersion[] | undefined) {
  const list = versions ?? [];
  return { hashes: list.map((v) => v.hash), packageIds: list.map((v) => v.packageId), contents: list.map((v) => v.json) };
}
