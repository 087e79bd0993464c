/**
 * A session's context is saved as it is. XState's own persisting takes any object with the keys
 * `sessionId`, `send` and `ref` for an actor reference and saves a marker instead: a record
 * keyed by names someone chose (an app's tool variables, a package's tags) with those three
 * names would be lost, the whole record with them.
 */
import { describe, expect, it } from 'vitest';
import type { Model, ModelReply } from '../../src/core/models/model.js';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { envelope, sessionEnvelope } from '../../src/runtime/persisted.js';
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

describe('the envelope without XState walking the context', () => {
  it('is what XState persists, with the live context: at rest and with a model call in flight', async () => {
    // A model that answers when told, so the session can be looked at while the call is in flight.
    let release: (reply: ModelReply) => void = () => {};
    let called: () => void = () => {};
    const inFlight = new Promise<void>((resolve) => (called = resolve));
    const model: Model = {
      label: 'held',
      complete: () =>
        new Promise<ModelReply>((resolve) => {
          release = resolve;
          called();
        }),
    };
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const actor = session.actorRef;
    const ours = () => sessionEnvelope(actor.logic, actor.getSnapshot());
    const xstates = () => envelope({ ...(actor.getPersistedSnapshot() as object), context: actor.getSnapshot().context });
    expect(ours()).toEqual(xstates());
    const sent = session.send({ type: 'user_submitted_input', text: 'Hello.' });
    await inFlight;
    // The model turn in flight is saved as the actor's child (without the context as its input: context-inputs.ts).
    expect(Object.keys(actor.getSnapshot().children)).toEqual(['managerTurn']);
    expect(ours()).toEqual(xstates());
    release({ content: null, toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'ask_user', arguments: '{"message":"Go on?"}' } }] });
    await sent;
    expect(actor.getSnapshot().value).toEqual({ waiting_user: 'intake' });
    expect(ours()).toEqual(xstates());
    await session.close();
  });
});
