/**
 * A decision names the wait it answers (`wait`), and is applied to that wait or not at all:
 * a repeat of the decision that closed a wait is a harmless repeat, another decision for a
 * closed wait is refused (`wait_closed`, journalled), and a decision without `wait` behaves as
 * before. A property test fires duplicate and stale sends at once, in any interleaving.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { Session } from '../../src/runtime/session.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { SessionStreamEvent } from '../../src/core/machines/stream-events.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-waits-');

/** A manager that asks back every round: each accepted answer opens the next wait. */
const askingModel = (rounds: number) =>
  new ScriptedModel(
    Array.from({ length: rounds }, (_, i) => ({ agent: 'manager' as const, toolCalls: [scriptedCall('ask_user', { message: `Question ${i + 1}?` })] })),
  );

const answer = (text: string, wait?: number, by?: string) => ({
  type: 'user_submitted_input' as const,
  text,
  ...(wait !== undefined ? { wait } : {}),
  ...(by ? { by } : {}),
});

describe('a decision lands on the wait it names, or nowhere', () => {
  it('numbers the waits; a repeat of the closing decision is harmless, another decision for a closed wait is refused and journalled', async () => {
    const store = new SqliteStore(temp.path('waits.db'));
    const model = askingModel(2);
    const session = await createRuntime({ model, store }).createSession({ packageId: 'tiny' });
    expect(session.view()).toMatchObject({ state: 'waiting_user.intake', wait: 1 });

    const first = await session.send(answer('A ghost story.', 1));
    expect(first).toMatchObject({ ok: true, view: { wait: 2 } });
    expect(first.repeated).toBeUndefined();

    // The same decision again for wait 1 (a double click): nothing applied, reported as a repeat.
    const repeat = await session.send(answer('A ghost story.', 1, 'someone-else'));
    expect(repeat).toMatchObject({ ok: true, repeated: true, view: { wait: 2 } });
    expect(model.calls).toHaveLength(1);

    // Another decision for wait 1 (a second tab): refused, naming the open wait.
    const other = await session.send(answer('A sea story.', 1));
    expect(other).toMatchObject({ ok: false, error: { code: 'wait_closed', wait: 1, openWait: 2 } });
    expect(other.ok ? '' : other.error.message).toMatch(/Wait 1 is no longer open.*the open wait is 2/);
    // A wait that has not opened is refused too.
    expect(await session.send(answer('Later.', 7))).toMatchObject({ ok: false, error: { code: 'wait_closed', wait: 7, openWait: 2 } });
    expect(model.calls).toHaveLength(1);

    // Both refusals are in the journal, with their code; the repeat too (as a refusal of the chart).
    const refusals = session.view().rejections.filter((r) => r.code === 'wait_closed');
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatchObject({ repeated: true, state: 'waiting_user.intake' });
    const journal = await store.journal(session.id);
    expect(journal.filter((e) => (e.payload as { wait?: number }).wait === 1)).toHaveLength(3);

    // Without `wait`, the event answers the open wait, as before.
    expect(await session.send(answer('Short, please.'))).toMatchObject({ ok: true, view: { wait: 3 } });
    await session.close();
    await store.close();
  });

  it('with a store, a repeat of the decision that closed an older wait is harmless too (the journal says so); an event naming no wait is journalled with the one it answered', async () => {
    const store = new SqliteStore(temp.path('older.db'));
    const model = askingModel(3);
    const session = await createRuntime({ model, store }).createSession({ packageId: 'tiny' });
    await session.send(answer('First.', 1));
    await session.send(answer('Second.'));
    expect(session.view().wait).toBe(3);
    expect(await session.send(answer('First.', 1))).toMatchObject({ ok: true, repeated: true, view: { wait: 3 } });
    expect(await session.send(answer('Second.', 2))).toMatchObject({ ok: true, repeated: true });
    expect(await session.send(answer('Other.', 2))).toMatchObject({ ok: false, error: { code: 'wait_closed', wait: 2, openWait: 3 } });
    expect(model.calls).toHaveLength(2);
    const journal = await store.journal(session.id);
    expect(journal.find((e) => (e.payload as { text?: string }).text === 'Second.')?.payload).toMatchObject({ wait: 2 });
    await session.close();
    await store.close();
  });

  it('two identical decisions sent at once: the first is applied, the second reports a repeat (memory and SQLite)', async () => {
    for (const store of [undefined, new SqliteStore(temp.path('twice.db'))]) {
      const model = askingModel(1);
      const session = await createRuntime({ model, ...(store ? { store } : {}) }).createSession({ packageId: 'tiny' });
      const [a, b] = await Promise.all([session.send(answer('Otters.', 1)), session.send(answer('Otters.', 1))]);
      expect(a).toMatchObject({ ok: true, view: { wait: 2 } });
      expect(b).toMatchObject({ ok: true, repeated: true, view: { wait: 2 } });
      expect(model.calls).toHaveLength(1);
      await session.close();
      await store?.close();
    }
  });

  it('a repeat arriving after the decision ended the session is still a harmless repeat', async () => {
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Nothing to do.' })] }]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    expect(await session.send(answer('Nothing.', 1))).toMatchObject({ ok: true, view: { state: 'done' } });
    expect(await session.send(answer('Nothing.', 1))).toMatchObject({ ok: true, repeated: true, view: { state: 'done' } });
    expect(await session.send(answer('Something else.', 1))).toMatchObject({ ok: false, error: { code: 'wait_closed', openWait: null } });
  });

  it('property: duplicate and stale sends in any interleaving apply at most one decision per wait, each to the wait it named', async () => {
    // Each step: a client reads the open wait, then fires a burst of sends at once: repeats of
    // one decision, other decisions, sends naming an older wait, and sends naming none.
    const burst = fc.array(fc.record({ text: fc.constantFrom('same', 'other'), names: fc.constantFrom('open', 'older', 'none') }), {
      minLength: 1,
      maxLength: 4,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(burst, { minLength: 1, maxLength: 4 }), async (bursts) => {
        const sends = bursts.flat().length;
        const model = askingModel(sends);
        const session: Session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
        const decisions: Extract<SessionStreamEvent, { type: 'decision' }>[] = [];
        session.subscribe((e) => {
          if (e.type === 'decision') decisions.push(e);
        });
        const named = new Map<string, number | undefined>();
        let n = 0;
        for (const sendsOfBurst of bursts) {
          const open = session.view().wait!;
          const results = await Promise.all(
            sendsOfBurst.map(({ text, names }) => {
              const by = `client-${n++}`;
              const wait = names === 'open' ? open : names === 'older' ? Math.max(1, open - 1) : undefined;
              named.set(by, wait);
              return session.send(answer(`${text} at ${open}`, wait, by));
            }),
          );
          for (const result of results) if (!result.ok) expect(result.error.code).toBe('wait_closed');
        }
        // Each decision the chart took was for the wait its sender named (when it named one), and no wait was decided twice.
        for (const d of decisions) {
          const wait = named.get(d.by!);
          if (wait !== undefined) expect(d.wait).toBe(wait);
        }
        expect(new Set(decisions.map((d) => d.wait)).size).toBe(decisions.length);
        expect(model.calls).toHaveLength(decisions.length);
        session.stop();
      }),
      { numRuns: 60 },
    );
  });
});
