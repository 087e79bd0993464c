/**
 * Sends that count once (SQLite, memory): the same send twice with one idempotency key
 * appends one journal entry and resolves with the stored result, also after a restart; the
 * key with another event is refused; a malformed key is refused before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-keys-');
const asks = (n = 1) =>
  new ScriptedModel(Array.from({ length: n }, () => ({ agent: 'manager' as const, toolCalls: [scriptedCall('ask_user', { message: 'Which coast?' })] })));
const input = { type: 'user_submitted_input', text: 'A ghost story.' } as const;

describe('idempotent sends', () => {
  it('SQLite: one key, two sends, one journal entry; a restart keeps the key; another event with the key is refused', async () => {
    const db = temp.path('keys.db');
    const store = new SqliteStore(db);
    const model = asks();
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const first = await session.send(input, { idempotencyKey: 'retry-1' });
    expect(first).toMatchObject({ ok: true, view: { state: 'waiting_user.intake' } });
    expect(first.repeated).toBeUndefined();
    const entries = (await store.journal(session.id)).length;

    const again = await session.send(input, { idempotencyKey: 'retry-1' });
    expect(again).toEqual({ ...first, repeated: true });
    expect((await store.journal(session.id)).length).toBe(entries);
    expect(model.calls).toHaveLength(1);
    await session.close();
    await store.close();

    // A restart: another process on the same file.
    const reopened = new SqliteStore(db);
    const later = await createRuntime({ model: asks(0), store: reopened }).resumeSession(session.id);
    const repeat = await later.send(input, { idempotencyKey: 'retry-1' });
    expect(repeat).toMatchObject({ ok: true, repeated: true, view: first.view });
    const other = await later.send({ type: 'user_submitted_input', text: 'Another story.' }, { idempotencyKey: 'retry-1' });
    expect(other).toMatchObject({ ok: false, error: { code: 'idempotency_key_reused' } });
    expect(other.ok ? '' : other.error.message).toContain('retry-1');
    expect((await reopened.journal(session.id)).length).toBe(entries);
    await later.close();
    await reopened.close();
  });

  it('a refused event spends its key too (the retry gets the same refusal); a malformed key sends nothing', async () => {
    const store = new SqliteStore(temp.path('refused.db'));
    const runtime = createRuntime({ model: asks(0), store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const entries = async () => (await store.journal(session.id)).length;
    const before = await entries();
    const refused = await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: 'k-2' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'event_refused' } });
    expect(await entries()).toBe(before + 1);
    expect(await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: 'k-2' })).toMatchObject({ ...refused, repeated: true });
    expect(await entries()).toBe(before + 1);
    for (const key of ['', 'with space', 'x'.repeat(201), 'new\nline']) {
      expect(await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: key })).toMatchObject({ ok: false, error: { code: 'invalid_event' } });
    }
    expect(await entries()).toBe(before + 1);
    await session.close();
    await store.close();
  });

  it('memory: a session without a store counts a keyed send once too', async () => {
    const model = asks();
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const first = await session.send(input, { idempotencyKey: 'mem-1' });
    expect(await session.send(input, { idempotencyKey: 'mem-1' })).toEqual({ ...first, repeated: true });
    expect(model.calls).toHaveLength(1);
  });
});
