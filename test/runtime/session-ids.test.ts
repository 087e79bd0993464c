/**
 * One rule for session ids (src/ids.ts), in the library: createSession({ id }), resumeSession,
 * openSession, history and forkSession refuse an id the HTTP API could not address (empty,
 * over 200 characters, control or invisible characters) with InvalidSessionIdError naming
 * the rule, before anything reaches a store; MemoryStore's create does too.
 */
import { describe, expect, it } from 'vitest';
import { InvalidSessionIdError } from '../../src/core/errors.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { checkSessionId, sessionIdProblem } from '../../src/ids.js';

const RULE = /a session id has 1 to 200 characters, none of them a control or invisible character, and is not "\." or "\.\."/;
const BAD = [
  '.',
  '..',
  '',
  'x'.repeat(201),
  'x'.repeat(10_000),
  'a\u0000b',
  'a\u001b[2Jb',
  'line\nbreak',
  'tab\there',
  'a\u202eb',
  'zero\u200bwidth',
  'del\u007f',
  'c1\u0085',
  'lone\ud800',
];

describe('the session id rule', () => {
  it('refuses bad ids in every runtime entry point, naming the rule and never echoing the id', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const real = await runtime.createSession({ packageId: 'tiny' });
    const entry = (await store.journal(real.id))[0]!;
    for (const id of BAD) {
      for (const attempt of [
        () => runtime.createSession({ packageId: 'tiny', id }),
        () => runtime.resumeSession(id),
        () => runtime.openSession(id),
        () => runtime.history(id),
        () => runtime.forkSession(id, { atSeq: 1 }),
        () => runtime.forkSession(real.id, { atSeq: entry.seq, id }),
        () => store.create({ id, packageId: null, snapshot: {}, entry: { kind: 'created', type: 'created', payload: {}, state: 'idle' } }),
      ]) {
        const error = await attempt().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, JSON.stringify(id.slice(0, 20))).toBeInstanceOf(InvalidSessionIdError);
        expect((error as InvalidSessionIdError).code).toBe('invalid_session_id');
        expect((error as Error).message).toMatch(RULE);
        if (id.length > 1 && id !== '..') expect((error as Error).message).not.toContain(id);
      }
    }
    expect((await store.list()).sessions.map((s) => s.id)).toEqual([real.id]);
  });

  it('SqliteStore.create refuses them too, before anything is written', async () => {
    const store = new SqliteStore(':memory:');
    try {
      for (const id of BAD) {
        await expect(
          store.create({ id, packageId: null, snapshot: {}, entry: { kind: 'created', type: 'created', payload: {}, state: 'idle' } }),
        ).rejects.toThrow(InvalidSessionIdError);
      }
      expect((await store.list()).sessions).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('refuses them without a store too (createSession({ id }) on a runtime that keeps nothing)', async () => {
    const runtime = createRuntime({ model: new DemoModel() });
    await expect(runtime.createSession({ id: '' })).rejects.toThrow(InvalidSessionIdError);
  });

  it('accepts what the runtime generates and what people choose: 200 characters, punctuation, letters beyond ASCII', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    for (const id of ['x'.repeat(200), 'ticket 42 / draft #3', 'café-über_1', 'user@example.com:1']) {
      expect(sessionIdProblem(id)).toBeNull();
      expect((await runtime.createSession({ packageId: 'tiny', id })).id).toBe(id);
      expect((await runtime.resumeSession(id)).id).toBe(id);
    }
    const generated = await runtime.createSession({});
    expect(checkSessionId(generated.id, 'test')).toBe(generated.id);
  });

  it('says where the problem is: the length, or the position and code point of the first bad character', () => {
    expect(sessionIdProblem('')).toBe('the session id is empty');
    expect(sessionIdProblem('x'.repeat(201))).toBe('the session id has 201 characters');
    expect(sessionIdProblem('ab\u0000')).toBe('character 3 of the session id is U+0000');
    expect(sessionIdProblem(42)).toBe('the session id is number, not a string');
  });
});
