/**
 * A session's context is saved as it is. XState's own persisting takes any object with the keys
 * `sessionId`, `send` and `ref` for an actor reference and saves a marker instead: a record
 * keyed by names someone chose (an app's tool variables, a package's tags) with those three
 * names would be lost, the whole record with them.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const ACTOR_LIKE = { sessionId: 'a', send: 'b', ref: 'c' };

describe('records keyed like an actor reference', () => {
  it('tool variables and tags named sessionId, send and ref survive a resume and a fork', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Go on?' })] }]);
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny', toolVariables: ACTOR_LIKE, blackboard: ACTOR_LIKE });
    await session.send({ type: 'user_submitted_input', text: 'Hello.' });
    await session.close();

    const resumed = await runtime.resumeSession(session.id);
    const context = resumed.actorRef.getSnapshot().context;
    expect(context.package?.toolVariables).toEqual(ACTOR_LIKE);
    expect(Object.keys(context.blackboard)).toEqual(expect.arrayContaining(['sessionId', 'send', 'ref', 'request']));
    expect(await resumed.tagVersion('send', 1)).toMatchObject({ body: 'b' });
    await resumed.close();

    const fork = await runtime.forkSession(session.id, { atSeq: (await store.journal(session.id)).length });
    expect(fork.actorRef.getSnapshot().context.package?.toolVariables).toEqual(ACTOR_LIKE);
    await fork.close();
  });
});
