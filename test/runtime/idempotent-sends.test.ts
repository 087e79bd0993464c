/**
 * Sends that count once (SQLite, memory): the same send twice with one idempotency key
 * appends one journal entry and resolves with the stored result, also after a restart; the
 * key with another event is refused; a malformed key is refused before anything is sent; a
 * refused or invalid send spends no key.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { useTempDir } from '../support/temp.js';
import { SEND_KEYS_KEPT } from '../../src/store/session-store.js';

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

  it('a refused or invalid send spends no key: 101 refused keyed sends leave a real key in place, and its retry still counts once', async () => {
    const store = new SqliteStore(temp.path('refused.db'));
    const model = asks();
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const entries = async () => (await store.journal(session.id)).length;
    const real = await session.send(input, { idempotencyKey: 'real-1' });
    expect(real).toMatchObject({ ok: true, view: { state: 'waiting_user.intake' } });
    const before = await entries();
    // More refused keyed sends than the store keeps keys: none of them takes a place.
    for (let i = 0; i <= SEND_KEYS_KEPT; i++) {
      const refused = await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: `refused-${i}` });
      expect(refused).toMatchObject({ ok: false, error: { code: 'event_refused' } });
    }
    const invalid = await session.send({ type: 'user_submitted_input', text: '' } as never, { idempotencyKey: 'invalid-1' });
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid_event' } });
    expect(await entries()).toBe(before + SEND_KEYS_KEPT + 2);
    // A refused send's key was not spent: sent again, it is judged again (refused again, journalled again).
    expect(await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: 'refused-0' })).toMatchObject({
      ok: false,
      error: { code: 'event_refused' },
    });
    expect((await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: 'refused-0' })).repeated).toBeUndefined();
    // The real key is still kept: its retry runs nothing again.
    expect(await session.send(input, { idempotencyKey: 'real-1' })).toMatchObject({ ok: true, repeated: true });
    expect(model.calls).toHaveLength(1);
    for (const key of ['', 'with space', 'x'.repeat(201), 'new\nline']) {
      expect(await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: key })).toMatchObject({ ok: false, error: { code: 'invalid_event' } });
    }
    await session.close();
    await store.close();
  });

  it('memory: refused keyed sends spend no key either', async () => {
    const model = asks();
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    await session.send(input, { idempotencyKey: 'real-1' });
    for (let i = 0; i <= SEND_KEYS_KEPT; i++) await session.send({ type: 'user_approved_next_step' }, { idempotencyKey: `refused-${i}` });
    expect(await session.send(input, { idempotencyKey: 'real-1' })).toMatchObject({ ok: true, repeated: true });
    expect(model.calls).toHaveLength(1);
  });

  it('memory: a session without a store counts a keyed send once too', async () => {
    const model = asks();
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const first = await session.send(input, { idempotencyKey: 'mem-1' });
    expect(await session.send(input, { idempotencyKey: 'mem-1' })).toEqual({ ...first, repeated: true });
    expect(model.calls).toHaveLength(1);
  });
});
