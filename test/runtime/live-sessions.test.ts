/**
 * `runtime.live`: the one registry of the sessions a runtime holds, created, resumed and
 * restored ones alike, each until it is done, stopped or failed.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const request = { type: 'user_submitted_input', text: 'A note about tea' } as const;
const askUser = () => ({ agent: 'manager' as const, toolCalls: [scriptedCall('ask_user', { message: 'Which tea?' })] });

describe('runtime.live', () => {
  it('holds a restored session while it runs (openSession finds it) and lets it go when it stops', async () => {
    const first = await createRuntime({ model: new ScriptedModel([askUser()]) }).createSession({ packageId: 'tiny' });
    expect((await first.send(request)).ok).toBe(true);
    const runtime = createRuntime({ model: new ScriptedModel() });
    const restored = runtime.restoreSession(first.persisted());
    expect(runtime.live.get(first.id)).toBe(restored);
    expect(await runtime.openSession(first.id)).toBe(restored);
    restored.stop();
    expect(runtime.live.has(first.id)).toBe(false);
    expect(runtime.live.size).toBe(0);
  });

  it('is a read-only view: it follows the registry, and offers no way to change it', async () => {
    const runtime = createRuntime({ model: new ScriptedModel() });
    const session = await runtime.createSession({ packageId: 'tiny' });
    expect([...runtime.live.keys()]).toEqual([session.id]);
    expect(runtime.live).not.toBeInstanceOf(Map);
    expect('set' in runtime.live || 'delete' in runtime.live || 'clear' in runtime.live).toBe(false);
    session.stop();
    expect([...runtime.live]).toEqual([]);
  });

  it('with a store, a memory-only copy is not the stored session: openSession resumes the stored one and the copy keeps running', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new ScriptedModel([askUser()]), store });
    const stored = await runtime.createSession({ packageId: 'tiny' });
    expect((await stored.send(request)).ok).toBe(true);
    const persisted = stored.persisted();
    stored.stop();
    const copy = runtime.restoreSession(persisted);
    expect(copy.revision).toBeUndefined();
    const opened = await runtime.openSession(stored.id);
    expect(opened).not.toBe(copy);
    expect(opened.revision).toBe(stored.revision);
    expect(copy.actorRef.getSnapshot().status).toBe('active');
    expect(runtime.live.get(stored.id)).toBe(opened);
  });
});
