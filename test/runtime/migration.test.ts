/**
 * A session saved with snapshot schema v1 (whole transcripts and every tag body in the
 * context; the request's versions each repeating all earlier text) opens through the v1 → v2
 * migration: bounded windows, the request in parts, old bodies archived — and nothing it
 * held is lost: resume saves the migrated snapshot with that history in the archive.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requestText, type TagVersion } from '../../src/core/blackboard/blackboard.js';
import { openEnvelopeWithHistory, SNAPSHOT_SCHEMA_VERSION } from '../../src/runtime/persisted.js';
import { DEFAULT_WINDOW } from '../../src/core/machines/transcript.js';
import { createRuntime, MemoryStore, SnapshotError, SqliteStore, type ChatMessage, type SessionContext } from '../../src/index.js';
import { scriptedCall as call, ScriptedModel } from '../../src/testing.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-migration-');
const fixture = JSON.parse(readFileSync(new URL('../fixtures/session-v1-bounded.json', import.meta.url), 'utf8')) as {
  session: { id: string; packageId: string; snapshot: { schemaVersion: number; snapshot: { context: Record<string, unknown> } } };
};
const v1 = fixture.session.snapshot;
const oldContext = v1.snapshot.context as { managerMessages: ChatMessage[]; workerMessages: ChatMessage[] };

describe('snapshot schema v3 → v4', () => {
  const v3 = JSON.parse(readFileSync(new URL('../fixtures/snapshots/v3.json', import.meta.url), 'utf8')) as {
    schemaVersion: number;
    snapshot: { context: SessionContext };
  };

  it('the archived entries of a tag become one summary; the window limits stay as stored (v3 default: 60 messages)', () => {
    expect(v3.schemaVersion).toBe(3);
    const oldRequest = v3.snapshot.context.blackboard.request as unknown as { version: number; archived?: true; size?: number; body?: string }[];
    expect(oldRequest.map((v) => v.archived ?? false)).toEqual([true, false]);
    const { snapshot, migratedHistory } = openEnvelopeWithHistory('s', structuredClone(v3));
    const context = (snapshot as { context: SessionContext }).context;
    expect(context.blackboard.request).toEqual([{ archived: 1, size: oldRequest[0]!.size }, oldRequest[1]]);
    expect(context.blackboard.note).toEqual(v3.snapshot.context.blackboard.note);
    expect(context.transcripts.window).toEqual({ messages: 60, chars: 32_000 });
    expect(context.transcripts.window).not.toEqual(DEFAULT_WINDOW);
    expect(context.transcripts.manager).toEqual(v3.snapshot.context.transcripts.manager);
    expect(migratedHistory).toEqual([]);
  });

  it("an app's own window limits stay", () => {
    const own = structuredClone(v3);
    own.snapshot.context.transcripts.window = { messages: 200, chars: 100_000 };
    const { snapshot } = openEnvelopeWithHistory('s', own);
    expect((snapshot as { context: SessionContext }).context.transcripts.window).toEqual({ messages: 200, chars: 100_000 });
  });

  it('a v5 step gets the approval policy "model": the manager decided alone before v6', () => {
    const { snapshot } = openEnvelopeWithHistory('s', structuredClone(v3));
    const context = (snapshot as { context: SessionContext }).context;
    const step = { workerId: 'w', reason: 'r', requiresApproval: true };
    const { snapshot: migrated } = openEnvelopeWithHistory('s', { schemaVersion: 5, snapshot: { ...(snapshot as object), context: { ...context, step } } });
    expect((migrated as { context: SessionContext }).context.step).toEqual({ ...step, approval: 'model' });
    // A v6 step without one is not a valid snapshot.
    expect(() => openEnvelopeWithHistory('s', { schemaVersion: 6, snapshot: { ...(snapshot as object), context: { ...context, step } } })).toThrow(
      /step\.approval/,
    );
  });

  it('a v4 tag list with a summary anywhere but first, or without its latest body, is refused', () => {
    const { snapshot } = openEnvelopeWithHistory('s', structuredClone(v3));
    const context = (snapshot as { context: SessionContext }).context;
    const [summary, latest] = context.blackboard.request!;
    const envelopeWith = (request: unknown[]) => ({
      schemaVersion: 4,
      snapshot: { ...(snapshot as object), context: { ...context, blackboard: { ...context.blackboard, request } } },
    });
    expect(() => openEnvelopeWithHistory('s', envelopeWith([summary, latest]))).not.toThrow();
    expect(() => openEnvelopeWithHistory('s', envelopeWith([latest, summary]))).toThrow(SnapshotError);
    expect(() => openEnvelopeWithHistory('s', envelopeWith([summary]))).toThrow(SnapshotError);
    expect(() => openEnvelopeWithHistory('s', envelopeWith([{ archived: 1 }, latest]))).toThrow(/blackboard\.request/);
  });
});

describe('snapshot schema v1 → v2', () => {
  it('the fixture is v1, and the migration bounds it without losing anything', () => {
    expect(v1.schemaVersion).toBe(1);
    expect(SNAPSHOT_SCHEMA_VERSION).toBe(10);
    expect(oldContext.managerMessages.length).toBeGreaterThan(60);
    const { snapshot, migratedHistory } = openEnvelopeWithHistory('s', structuredClone(v1));
    const context = (snapshot as { context: SessionContext }).context;
    const manager = context.transcripts.manager;
    expect(manager.messages.length).toBeLessThanOrEqual(60);
    expect(manager.total).toBe(oldContext.managerMessages.length);
    expect(manager.omitted + manager.messages.length).toBe(manager.total);
    expect(manager.messages).toEqual(oldContext.managerMessages.slice(-manager.messages.length));
    // The request's cumulative versions become parts; readers still get the whole text.
    const request = context.blackboard.request!;
    expect(request.map((v) => ('body' in v ? v.body : null))).toEqual([null, 'Answers to the clarifying questions:\n- Which century?\n  → The 1890s']);
    const parts = migratedHistory!.filter((i) => i.kind === 'version' && i.key === 'request').map((i) => ({ tag: 'request', version: i.value as TagVersion }));
    expect(parts.map((p) => p.version.body)).toEqual([
      'A ghost story in a lighthouse',
      'Answers to the clarifying questions:\n- Which century?\n  → The 1890s',
    ]);
    expect(requestText(context.blackboard, parts)).toBe((v1.snapshot.context.blackboard as Record<string, { body: string }[]>).request!.at(-1)!.body);
    // note v1 (accepted, then a newer version) leaves the context; v2 keeps its body.
    // (v4: the archived versions are counted in one summary, first in the tag's list.)
    expect(context.blackboard.note).toEqual([{ archived: 1, size: 'First note.'.length }, expect.objectContaining({ version: 2, body: 'Second note.' })]);
    const messages = migratedHistory!.filter((i) => i.kind === 'message' && i.key === 'manager').map((i) => i.value);
    expect(messages).toEqual(oldContext.managerMessages);
    expect(migratedHistory!.filter((i) => i.kind === 'version' && i.key === 'note').map((i) => (i.value as { body: string }).body)).toEqual([
      'First note.',
      'Second note.',
    ]);
  });

  it('resume saves the migrated snapshot with its history in the archive; the session goes on', async () => {
    const store = new SqliteStore(tmp.path('v1.db'));
    try {
      await store.create({
        id: fixture.session.id,
        packageId: 'tiny',
        snapshot: v1,
        entry: { kind: 'created', type: 'created', payload: { packageId: 'tiny' }, state: 'waiting_user.input' },
      });
      const model = new ScriptedModel([
        { agent: 'manager', toolCalls: [call('read_blackboard', { tags: ['note'], version: 1 })] },
        { agent: 'manager', toolCalls: [call('ask_user', { message: 'Anything else?' })] },
      ]);
      const runtime = createRuntime({ model, store });
      const session = await runtime.resumeSession(fixture.session.id);
      const stored = await store.load(fixture.session.id);
      expect((stored!.snapshot as { schemaVersion: number }).schemaVersion).toBe(10);
      expect(stored!.revision).toBe(2);
      expect(await session.transcript('manager')).toEqual(oldContext.managerMessages);
      expect(await session.transcript('worker')).toEqual(oldContext.workerMessages);
      expect((await session.tagVersion('note', 1))?.body).toBe('First note.');
      const r = await session.send({ type: 'user_submitted_input', text: 'Show me the first note again.' });
      expect(r.ok && r.view.waitingReason).toBe('input');
      expect(model.calls[1]!.messages.findLast((m) => m.role === 'tool')!.content).toBe('## note (v1, by echo)\nFirst note.');
      // Another process sees the same history.
      await session.close();
      const history = await createRuntime({ model: new ScriptedModel([]), store }).history(fixture.session.id);
      const all = await history.transcript('manager');
      expect(all.slice(0, oldContext.managerMessages.length)).toEqual(oldContext.managerMessages);
      expect(all.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_2_1', content: 'Shown to the user; their reply follows.' });
    } finally {
      await store.close();
    }
  });

  it("restoreSession keeps a v1 snapshot's history in memory; a newer or broken snapshot is refused", async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), store: new MemoryStore() });
    const session = runtime.restoreSession(structuredClone(v1));
    expect(await session.transcript('manager')).toEqual(oldContext.managerMessages);
    expect((await session.tagVersion('note', 1))?.body).toBe('First note.');
    session.stop();
    expect(() => runtime.restoreSession({ ...v1, schemaVersion: SNAPSHOT_SCHEMA_VERSION + 1 })).toThrow(
      new RegExp(`newer Steward.*v${SNAPSHOT_SCHEMA_VERSION + 1}`),
    );
    expect(() => runtime.restoreSession({ schemaVersion: 1, snapshot: { context: { managerMessages: 'x' } } })).toThrow(SnapshotError);
  });
});

describe('snapshot schema v6 → v7', () => {
  it('a v6 context gets numbered waits, starting at wait 1 with no decision kept', () => {
    const v6 = JSON.parse(readFileSync(new URL('../fixtures/snapshots/v6.json', import.meta.url), 'utf8')) as {
      schemaVersion: number;
      snapshot: { context: Record<string, unknown> };
    };
    expect(v6.schemaVersion).toBe(6);
    expect(v6.snapshot.context.waits).toBeUndefined();
    const { snapshot } = openEnvelopeWithHistory('s', v6);
    // (then v7 → v8: no deadline, no deciders)
    expect((snapshot as { context: SessionContext }).context.waits).toEqual({ opened: 1, answered: null, deadline: null, deciders: null });
  });
});

describe('snapshot schema v7 → v8', () => {
  it('a v7 wait keeps its number and its last decision, with no deadline and no deciders', () => {
    const v7 = JSON.parse(readFileSync(new URL('../fixtures/snapshots/v7.json', import.meta.url), 'utf8')) as {
      schemaVersion: number;
      snapshot: { context: { waits: Record<string, unknown> } };
    };
    expect(v7.schemaVersion).toBe(7);
    expect(v7.snapshot.context.waits.deadline).toBeUndefined();
    const { snapshot } = openEnvelopeWithHistory('s', v7);
    expect((snapshot as { context: SessionContext }).context.waits).toEqual({ ...v7.snapshot.context.waits, deadline: null, deciders: null });
  });
});
