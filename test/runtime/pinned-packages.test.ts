/**
 * Sessions pinned to their package version (SQLite): a prompt edited on disk does not change
 * a session that started before the edit — not on resume in a new process, not in a fork,
 * not in time travel — until `upgradeSession` moves it, journalling both hashes. A session
 * saved before pinning is pinned to the package on disk when it is first resumed.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { JournalReplayer } from '../../src/inspect/replay.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { copyTiny, echoSubmits, editEchoPrompt, NEW_PROMPT, OLD_PROMPT, proposeEcho, systemPrompt } from '../support/pinning.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-pin-');
let n = 0;
function scene() {
  n += 1;
  const packages = temp.path(`packages-${n}`);
  mkdirSync(packages);
  copyTiny(packages);
  return { packages, db: temp.path(`pin-${n}.db`) };
}

/** A session of `tiny` waiting in approve_step, made by a runtime that then goes away. */
async function waitingForApproval(packages: string, db: string): Promise<{ id: string; pinned: string }> {
  const store = new SqliteStore(db);
  const runtime = createRuntime({ model: proposeEcho(), store, packagesDir: packages });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const result = await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
  expect(result.view.state).toBe('waiting_user.approve_step');
  const pinned = result.view.packageVersion!;
  expect(pinned).toBe(runtime.packageVersionOnDisk('tiny'));
  await session.close();
  await store.close();
  return { id: session.id, pinned };
}

describe('sessions pinned to their package version (SQLite)', () => {
  it('an edited prompt does not change a waiting session resumed by a new process, until upgrade; upgrade journals both hashes', async () => {
    const { packages, db } = scene();
    const { id, pinned } = await waitingForApproval(packages, db);
    editEchoPrompt(packages);

    const store = new SqliteStore(db);
    const model = echoSubmits(2);
    const runtime = createRuntime({ model, store, packagesDir: packages });
    const onDisk = runtime.packageVersionOnDisk('tiny')!;
    expect(onDisk).not.toBe(pinned);
    const session = await runtime.resumeSession(id);
    expect(session.view()).toMatchObject({ packageVersion: pinned, packageOnDisk: onDisk });
    const approved = await session.send({ type: 'user_approved_next_step' });
    expect(approved.view.state).toBe('waiting_user.review_artifact');
    expect(systemPrompt(model.calls[0])).toContain(OLD_PROMPT);
    expect(systemPrompt(model.calls[0])).not.toContain(NEW_PROMPT);

    const upgraded = await runtime.upgradeSession(id, { to: 'current', by: 'ops' });
    expect(upgraded).toMatchObject({ from: pinned, to: onDisk, changed: true, view: { state: 'waiting_user.review_artifact', packageVersion: onDisk } });
    expect(upgraded.view.packageOnDisk).toBeUndefined();
    const last = (await store.journal(id)).at(-1)!;
    expect(last).toMatchObject({
      kind: 'event',
      type: 'package_upgraded',
      state: 'waiting_user.review_artifact',
      payload: { from: pinned, to: onDisk, by: 'ops' },
    });
    expect(await store.packageVersion(onDisk)).toMatchObject({ hash: onDisk, packageId: 'tiny' });

    // The next worker run reads the new prompt.
    await session.send({ type: 'user_rejected_artifact', artifactId: approved.view.artifact!.id, reason: 'Shorter.' });
    await session.send({ type: 'user_submitted_input', text: 'Two sentences.' });
    expect(systemPrompt(model.calls[1])).toContain(NEW_PROMPT);
    expect((await runtime.upgradeSession(id)).changed).toBe(false);
    await session.close();
    await store.close();
  });

  it('fork and time travel use the pinned version, also when the package folder is gone from disk', async () => {
    const { packages, db } = scene();
    const { id, pinned } = await waitingForApproval(packages, db);
    // The package's folder is replaced by an edited copy elsewhere, and the original removed.
    const elsewhere = temp.path(`packages-${n}-edited`);
    mkdirSync(elsewhere);
    copyTiny(elsewhere);
    editEchoPrompt(elsewhere);
    rmSync(packages, { recursive: true });

    const store = new SqliteStore(db);
    const model = echoSubmits();
    const runtime = createRuntime({ model, store, packagesDir: elsewhere });
    const journal = await store.journal(id);
    const fork = await runtime.forkSession(id, { atSeq: journal.length });
    expect(fork.view()).toMatchObject({ state: 'waiting_user.approve_step', packageVersion: pinned });
    await fork.send({ type: 'user_approved_next_step' });
    expect(systemPrompt(model.calls[0])).toContain(OLD_PROMPT);

    const replayer = new JournalReplayer(runtime);
    const first = replayer.at(id, journal, 1).snapshot.context as { package: { version?: string } };
    expect(first.package.version).toBe(pinned);
    await fork.close();
    await store.close();
  });

  it('a session saved before pinning (no version in its snapshot) is pinned to the package on disk when first resumed', async () => {
    const { packages, db } = scene();
    const { id } = await waitingForApproval(packages, db);
    // As Steward before pinning saved it: the package without `version`.
    const raw = new SqliteStore(db);
    const stored = (await raw.load(id))!;
    const snapshot = structuredClone(stored.snapshot) as { snapshot: { context: { package: { version?: string } } } };
    delete snapshot.snapshot.context.package.version;
    await raw.append({ id, expectedRevision: stored.revision, entries: [], snapshot });
    await raw.close();

    editEchoPrompt(packages);
    const store = new SqliteStore(db);
    const runtime = createRuntime({ model: echoSubmits(), store, packagesDir: packages });
    const session = await runtime.resumeSession(id);
    const onDisk = runtime.packageVersionOnDisk('tiny')!;
    expect(session.view().packageVersion).toBe(onDisk);
    expect(await store.packageVersion(onDisk)).toBeDefined();
    const again = await createRuntime({ model: echoSubmits(), store, packagesDir: packages }).resumeSession(id);
    expect(again.view().packageVersion).toBe(onDisk);
    await again.close();
    await session.close();
    await store.close();
  });

  it('a database of schema v4 holding a v4 session still loads: read-only readers find no versions, a writer migrates to v5 and resume pins it', async () => {
    const { packages, db } = scene();
    const { id } = await waitingForApproval(packages, db);
    // Back to what the Steward before pinning wrote: no v5 tables, a v4 snapshot without a version.
    const raw = new Database(db);
    const row = raw.prepare(`SELECT snapshot FROM sessions WHERE id = ?`).get(id) as { snapshot: string };
    const snapshot = JSON.parse(row.snapshot) as { schemaVersion: number; snapshot: { context: { package: { version?: string } } } };
    snapshot.schemaVersion = 4;
    delete snapshot.snapshot.context.package.version;
    raw.prepare(`UPDATE sessions SET snapshot = ? WHERE id = ?`).run(JSON.stringify(snapshot), id);
    raw.exec(`DROP TABLE send_keys; DROP TABLE package_versions;`);
    raw.pragma('user_version = 4');
    raw.close();

    const reader = new SqliteStore(db, { readOnly: true });
    expect((await reader.load(id))?.id).toBe(id);
    expect(await reader.packageVersion(`sha256:${'0'.repeat(64)}`)).toBeUndefined();
    expect(await reader.sendKey(id, 'k')).toBeUndefined();
    await reader.close();

    const store = new SqliteStore(db);
    const runtime = createRuntime({ model: echoSubmits(), store, packagesDir: packages });
    const session = await runtime.resumeSession(id);
    const onDisk = runtime.packageVersionOnDisk('tiny')!;
    expect(session.view().packageVersion).toBe(onDisk);
    expect(await store.packageVersion(onDisk)).toBeDefined();
    const approved = await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: 'after-migration' });
    expect(approved.view.state).toBe('waiting_user.review_artifact');
    expect(await store.sendKey(id, 'after-migration')).toMatchObject({ result: { ok: true } });
    await session.close();
    await store.close();
  });

  it('upgrade refuses, writing nothing, when the wait in progress would not be valid in the new version', async () => {
    const { packages, db } = scene();
    const { id, pinned } = await waitingForApproval(packages, db);
    const store = new SqliteStore(db);
    const runtime = createRuntime({ model: echoSubmits(), store, packagesDir: packages });
    const session = await runtime.resumeSession(id);
    expect((await session.send({ type: 'user_approved_next_step' })).view.state).toBe('waiting_user.review_artifact');
    await session.close();
    // The new version's echo writes "memo", no longer the "note" of the artifact under review.
    for (const [file, from, to] of [
      ['echo.md', 'outputTags: [note]', 'outputTags: [memo]'],
      ['summarize.md', '[note]', '[memo]'],
    ] as const) {
      const path = join(packages, 'tiny', 'workers', file);
      writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));
    }
    const later = createRuntime({ model: echoSubmits(0), store, packagesDir: packages });
    const entries = (await store.journal(id)).length;
    await expect(later.upgradeSession(id)).rejects.toThrow(
      /"note", which worker "echo" no longer writes in the new version: answer the wait in progress first/,
    );
    expect((await store.journal(id)).length).toBe(entries);
    expect((await later.openSession(id)).view().packageVersion).toBe(pinned);
    await store.close();
  });
});
