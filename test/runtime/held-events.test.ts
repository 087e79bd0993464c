/**
 * `Session.holdEventsUntilWritten` (a server's session kept loaded while it waits): its live
 * events wait for its next write, and are delivered in order once that write is made, or
 * dropped with everything the session did when the store had moved on (the write refused).
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import type { SessionStreamEvent } from '../../src/core/machines/stream-events.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const request = { type: 'user_submitted_input', text: 'A note about tea' } as const;
const askUser = () => ({ agent: 'manager' as const, toolCalls: [scriptedCall('ask_user', { message: 'Which tea?' })] });

describe('Session.holdEventsUntilWritten', () => {
  it('delivers the held events in order once the write is made, and nothing before it', async () => {
    const store = new MemoryStore();
    const session = await createRuntime({ model: new ScriptedModel([askUser()]), store }).createSession({ packageId: 'tiny' });
    const seen: SessionStreamEvent[] = [];
    const alone: SessionStreamEvent[] = [];
    session.holdEventsUntilWritten();
    session.subscribe((event) => seen.push(event));
    const sending = session.send(request);
    expect(seen).toEqual([]);
    expect((await sending).ok).toBe(true);
    expect(seen.map((e) => e.type)).toContain('round_started');

    // The same send on a session never held: the same events, in the same order.
    const other = await createRuntime({ model: new ScriptedModel([askUser()]), store: new MemoryStore() }).createSession({ packageId: 'tiny' });
    other.subscribe((event) => alone.push(event));
    await other.send(request);
    expect(seen.map((e) => e.type)).toEqual(alone.map((e) => e.type));
  });

  it('drops them when the write is refused (another writer moved the session on): nothing the stale session did is told', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new ScriptedModel([askUser()]), store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    // Another process writes the session: this object is a revision behind.
    const stored = (await store.load(session.id))!;
    await store.append({ id: session.id, expectedRevision: stored.revision, entries: [], snapshot: stored.snapshot });
    const seen: SessionStreamEvent[] = [];
    session.holdEventsUntilWritten();
    session.subscribe((event) => seen.push(event));
    const result = await session.send(request);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('conflict');
    expect(seen).toEqual([]);
    expect(session.isActive).toBe(false);
  });
});
