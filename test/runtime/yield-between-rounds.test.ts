/**
 * A model that answers without I/O (a script, the demo model, a cache) must not hold the
 * event loop for a whole burst: once a slice of the loop is used up, a round waits for the
 * next macrotask before it calls the model, so a timer, stop(), an HTTP request or another
 * session runs between rounds.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventLoopSlice, nextMacrotask } from '../../src/core/agents/next-macrotask.js';
import { createRuntime, type ModelRequest } from '../../src/index.js';
import { scriptedCall, ScriptedModel, type ScriptStep } from '../../src/testing.js';

const MAX = 1_000;
const listing: ScriptStep = { agent: 'manager', toolCalls: [scriptedCall('list_workers')] };
const input = (text: string) => ({ type: 'user_submitted_input', text }) as const;
/** A macrotask later: setImmediate's callbacks queued before this one have run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Microtasks that keep queueing each other: all of them run before any macrotask. */
const microtaskChain = (length: number, seen: number[]) => {
  const step = (i: number) =>
    queueMicrotask(() => {
      seen.push(i);
      if (i + 1 < length) step(i + 1);
    });
  step(0);
};

describe('rounds yield to the event loop', () => {
  it('a timer that calls stop() fires during a burst of instant rounds, and no model call starts after it', async () => {
    const model = new ScriptedModel(Array.from({ length: MAX }, () => listing));
    const session = await createRuntime({ model, maxBurst: MAX }).createSession({ packageId: 'tiny' });
    let callsAtStop = -1;
    const timer = setTimeout(() => {
      callsAtStop = model.calls.length;
      session.stop();
    }, 0);
    const result = await session.send(input('List the workers, again and again'));
    clearTimeout(timer);
    expect(callsAtStop, 'the timer fired before the burst was used up').toBeGreaterThan(0);
    expect(callsAtStop).toBeLessThan(MAX);
    expect(result).toMatchObject({ ok: false, error: { code: 'session_stopped' } });
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(model.calls.length, 'a round waiting for its turn when stop() came never called the model').toBe(callsAtStop);
  });

  it('two sessions of one runtime take turns: the one started later does not wait for the other burst to end', async () => {
    const order: string[] = [];
    const whose = (request: ModelRequest) => (JSON.stringify(request.messages).includes('session A') ? 'A' : 'B');
    const step: ScriptStep = (request) => {
      order.push(whose(request));
      return { content: null, toolCalls: [{ id: `c${order.length}`, type: 'function', function: { name: 'list_workers', arguments: '{}' } }] };
    };
    // Longer than one slice of rounds (EventLoopSlice), so that A's burst has to give the loop up.
    const burst = 200;
    const model = new ScriptedModel(Array.from({ length: 2 * burst }, () => step));
    const runtime = createRuntime({ model, maxBurst: burst });
    const [a, b] = await Promise.all([runtime.createSession({ packageId: 'tiny' }), runtime.createSession({ packageId: 'tiny' })]);
    const first = a.send(input('This is session A'));
    // B's user acts a macrotask later, as a second HTTP request would arrive.
    const second = nextTurn().then(() => b.send(input('This is session B')));
    const [ra, rb] = await Promise.all([first, second]);
    expect(ra.view).toMatchObject({ burst, waitingReason: 'input' });
    expect(rb.view).toMatchObject({ burst, waitingReason: 'input' });
    expect(order.filter((s) => s === 'A')).toHaveLength(burst);
    expect(order.indexOf('B'), 'B had a round before A used up its burst').toBeLessThan(order.lastIndexOf('A'));
    model.assertComplete();
  });

  describe('nextMacrotask', () => {
    afterEach(() => vi.unstubAllGlobals());

    it.each([
      ['setImmediate (Node)', false],
      ['a MessageChannel message (a browser: no setImmediate)', true],
    ])('resolves after every pending microtask, with %s', async (_, hideSetImmediate) => {
      if (hideSetImmediate) vi.stubGlobal('setImmediate', undefined);
      const seen: number[] = [];
      const waited = nextMacrotask().then(() => seen.length);
      microtaskChain(1_000, seen);
      expect(await waited).toBe(1_000);
    });
  });

  it('an instant burst gives the loop up once a slice, not before every round', async () => {
    // A macrotask queued at a model call has run by the next call only if the round between them waited for the loop.
    let calls = 0;
    let waited = 0;
    let queued = false;
    const step: ScriptStep = () => {
      calls += 1;
      if (!queued) {
        queued = true;
        setImmediate(() => {
          queued = false;
          waited += 1;
        });
      }
      return { content: null, toolCalls: [{ id: `c${calls}`, type: 'function', function: { name: 'list_workers', arguments: '{}' } }] };
    };
    const burst = 200;
    const model = new ScriptedModel(Array.from({ length: burst }, () => step));
    const session = await createRuntime({ model, maxBurst: burst }).createSession({ packageId: 'tiny' });
    const result = await session.send(input('List the workers, again and again'));
    expect(result.view).toMatchObject({ burst, waitingReason: 'input' });
    expect(calls).toBe(burst);
    expect(waited, 'rounds that gave the loop up').toBeGreaterThan(0);
    expect(waited, 'rounds that gave the loop up').toBeLessThanOrEqual(burst / 2);
  });

  describe('EventLoopSlice', () => {
    it('waits for a macrotask when its slice is used up, and not again while the new one lasts', async () => {
      const slice = new EventLoopSlice(60_000);
      const first = slice.next();
      expect(first, 'no slice yet: the first round waits').toBeInstanceOf(Promise);
      const seen: number[] = [];
      microtaskChain(100, seen);
      await first;
      expect(seen, 'the wait ran after every pending microtask').toHaveLength(100);
      expect(slice.next(), 'within the slice a round starts at once').toBeUndefined();
    });

    it('ends a slice after its count of rounds, whatever the clock says', async () => {
      const slice = new EventLoopSlice(60_000, 3);
      await slice.next();
      expect([slice.next(), slice.next()], 'rounds 2 and 3 of the slice').toEqual([undefined, undefined]);
      expect(slice.next(), 'round 4 starts a new slice').toBeInstanceOf(Promise);
    });

    it('with a slice of 0 ms every round waits', async () => {
      const slice = new EventLoopSlice(0);
      await slice.next();
      await nextTurn();
      expect(slice.next()).toBeInstanceOf(Promise);
    });
  });
});
