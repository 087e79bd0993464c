/**
 * A running session's snapshot holds its model turn's input (the context) once: the turn is
 * saved marked `inputIsContext`, and a resume gives the call the context back, so the call
 * made again is the one that was in flight. A snapshot of v9, with the input written out,
 * resumes the same way. A session pinned to its package on disk as it resumes still makes the
 * call it was making, with the package it was saved with.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore, type Model, type ModelRequest } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { withContextInputs, withoutContextInputs } from '../../src/runtime/context-inputs.js';
import { RUNNING_FIXTURE_REQUEST, runningFixturePath } from '../support/snapshot-fixture.js';

/** A model whose calls never answer; it keeps what each was asked. */
function hangingModel(): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return { label: 'hangs', requests, complete: (request) => (requests.push(request), new Promise(() => {})) };
}

type Stored = { schemaVersion: number; snapshot: { context: unknown; children: Record<string, { snapshot: Record<string, unknown>; inputIsContext?: true }> } };

describe('a running model turn is saved without a second copy of the context', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  async function crashedMidCall() {
    dir = mkdtempSync(join(tmpdir(), 'steward-context-inputs-'));
    const store = new SqliteStore(join(dir, 's.db'));
    const hanging = hangingModel();
    const crashed = await createRuntime({ model: hanging, store }).createSession({ packageId: 'tiny' });
    void crashed.send({ type: 'user_submitted_input', text: 'remember me' });
    while (!hanging.requests.length) await new Promise((r) => setTimeout(r, 5));
    await crashed.close(); // the process "dies" while the manager's call is in flight
    return { store, id: crashed.id, inFlight: hanging.requests[0]! };
  }

  it('the stored snapshot marks the turn and leaves its input out; a resume makes the same call again', async () => {
    const { store, id, inFlight } = await crashedMidCall();
    const stored = (await store.load(id))!.snapshot as Stored;
    expect(stored.schemaVersion).toBe(10);
    const turn = stored.snapshot.children.managerTurn!;
    expect(turn.inputIsContext).toBe(true);
    expect(turn.snapshot).not.toHaveProperty('input');
    const count = (value: unknown) => JSON.stringify(value).split('remember me').length - 1;
    expect(count(stored.snapshot.context)).toBeGreaterThan(0);
    expect(count(stored)).toBe(count(stored.snapshot.context));

    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Got it.' })] }]);
    const resumed = await createRuntime({ model, store }).resumeSession(id);
    expect((await resumed.settled()).message).toBe('Got it.');
    expect(model.calls[0]!.messages).toEqual(inFlight.messages);
    expect(model.calls[0]!.tools).toEqual(inFlight.tools);
    await resumed.close();
    await store.close();
  });

  it('the committed v10 sample of a running session resumes with the call that was in flight', async () => {
    const sample = JSON.parse(readFileSync(runningFixturePath(10), 'utf8')) as Stored;
    expect(sample.snapshot.children.managerTurn).toMatchObject({ inputIsContext: true });
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Got it.' })] }]);
    const session = createRuntime({ model }).restoreSession(sample);
    expect((await session.settled()).message).toBe('Got it.');
    expect(model.calls[0]!.messages.at(-1)).toEqual({ role: 'user', content: RUNNING_FIXTURE_REQUEST });
  });

  it('a v9 snapshot, its turn saved with the context as input, resumes with that call', async () => {
    const { store, id, inFlight } = await crashedMidCall();
    const stored = (await store.load(id))!.snapshot as Stored;
    const { inputIsContext: _mark, ...turn } = stored.snapshot.children.managerTurn!;
    const v9 = {
      schemaVersion: 9,
      snapshot: { ...stored.snapshot, children: { managerTurn: { ...turn, snapshot: { ...turn.snapshot, input: stored.snapshot.context } } } },
    };
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Got it.' })] }]);
    const resumed = createRuntime({ model }).restoreSession(v9);
    expect((await resumed.settled()).message).toBe('Got it.');
    expect(model.calls[0]!.messages).toEqual(inFlight.messages);
    await store.close();
  });

  it('a session saved before pinning is pinned to the disk, yet the call in flight is made as it was', async () => {
    const { store, id } = await crashedMidCall();
    const stored = (await store.load(id))!.snapshot as Stored;
    const context = stored.snapshot.context as { package: { version?: string; description: string } };
    // As saved before pinning (no version), with a description the package on disk no longer has.
    const { version: _version, ...unpinned } = context.package;
    const saved = { ...stored, snapshot: { ...stored.snapshot, context: { ...context, package: { ...unpinned, description: 'As it was saved.' } } } };
    await store.create({
      id: 'unpinned',
      packageId: 'tiny',
      snapshot: saved,
      entry: { kind: 'created', type: 'created', payload: {}, state: 'running.manager.thinking' },
    });
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Got it.' })] }]);
    const resumed = await createRuntime({ model, store }).resumeSession('unpinned');
    await resumed.settled();
    expect(model.calls[0]!.messages[0]!.content).toContain('As it was saved.');
    // The session itself is pinned to the package on disk from now on.
    expect(resumed.actorRef.getSnapshot().context.package?.version).toMatch(/^sha256:/);
    expect(resumed.actorRef.getSnapshot().context.package?.description).not.toBe('As it was saved.');
    await resumed.close();
    await store.close();
  });

  it('keeps an input that is not the context object, and an actor id that is a prototype name stays an own key', () => {
    const context = { a: 1 };
    const copy = { a: 1 };
    const children = JSON.parse('{"__proto__": {"snapshot": {"input": 1}}}') as Record<string, unknown>;
    Object.assign(children, { turn: { snapshot: { status: 'active', input: context } }, other: { snapshot: { status: 'active', input: copy } } });
    const saved = withoutContextInputs({ context, children }) as { children: Record<string, unknown> };
    expect(saved.children.turn).toEqual({ snapshot: { status: 'active' }, inputIsContext: true });
    expect(saved.children.other).toEqual({ snapshot: { status: 'active', input: copy } });
    expect(Object.keys(saved.children)).toEqual(['__proto__', 'turn', 'other']);
    const opened = withContextInputs(JSON.parse(JSON.stringify(saved)) as { context: unknown; children: Record<string, unknown> });
    expect(opened.children.turn).toEqual({ snapshot: { status: 'active', input: { a: 1 } } });
    expect(Object.keys(opened.children)).toEqual(['__proto__', 'turn', 'other']);
  });
});
