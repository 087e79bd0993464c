/**
 * Two clients answer the same item of a fan-out's wait at once, both having read it open: the
 * other client's answer lands first, then this run's send meets the item decided. The same
 * answer is a harmless repeat (the run goes through and reports the items still waiting);
 * another answer is refused, and never lands on another item. Deterministic: the host's send
 * is wrapped so that the other answer is sent right before this run's, after the run read the
 * thread.
 */
import type { BaseEvent } from '@ag-ui/core';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgUi } from '../../src/protocols/ag-ui/run.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SessionHost } from '../../src/serve/session-host.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { UserEvent } from '../../src/core/machines/session.events.js';
import { useTempDir } from '../support/temp.js';
import { runInput } from './protocol-server.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';

const temp = useTempDir('steward-fan-out-race-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

type Finished = { type: 'RUN_FINISHED'; outcome: { type: string; interrupts?: { id: string }[] } };

/** A thread of the trio package waiting for its three steps, and a run that another client's answer overtakes. */
async function racedThread(name: string) {
  const store = new SqliteStore(temp.path(`${name}.db`));
  const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
  const runtime = createRuntime({ model, store, packagesDir: trioPackage(temp.path(`${name}-packages`)) });
  const host = new SessionHost(runtime, store);
  open.push(async () => {
    await host.drain(1_000);
    await store.close();
  });
  const events: BaseEvent[] = [];
  await runAgUi({ runtime, store, host }, 'trio', runInput(name, 'r1', { messages: [{ id: 'u1', role: 'user', content: 'Three notes.' }] }), {}, (e) =>
    events.push(e),
  );
  const interrupts = (events.findLast((e) => e.type === 'RUN_FINISHED') as unknown as Finished).outcome.interrupts!;
  const north = interrupts.find((i) => i.id.endsWith('/item/run_north'))!;
  const wait = (await host.view(name)).view.wait!;
  /** Runs a resume of north's interrupt with `payload`; `first`, the other client's event, lands just before its send. */
  const race = async (payload: unknown, first: UserEvent) => {
    let overtaken = false;
    const racing = new Proxy(host, {
      get(target, key, receiver) {
        if (key !== 'send') return Reflect.get(target, key, receiver) as unknown;
        return async (...args: Parameters<SessionHost['send']>) => {
          if (!overtaken) {
            overtaken = true;
            expect(await target.send(name, first)).toMatchObject({ ok: true });
          }
          return target.send(...args);
        };
      },
    });
    const raced: BaseEvent[] = [];
    await runAgUi(
      { runtime, store, host: racing },
      'trio',
      runInput(name, 'r2', { resume: [{ interruptId: north.id, status: 'resolved', payload }] }),
      {},
      (e) => raced.push(e),
    );
    expect(overtaken).toBe(true);
    return { events: raced, view: (await host.view(name)).view, model };
  };
  return { race, wait };
}

describe('two answers to one item of a fan-out at once', () => {
  it('the same answer: the run that lost goes through, the item decided once, the others still waiting', async () => {
    const { race, wait } = await racedThread('twice-same');
    const { events, view, model } = await race({ approved: false, reason: 'No.' }, { type: 'user_rejected_next_step', item: 'run_north', reason: 'No.', wait });
    expect(events.find((e) => e.type === 'RUN_ERROR')).toBeUndefined();
    const finished = events.findLast((e) => e.type === 'RUN_FINISHED') as unknown as Finished;
    expect(finished.outcome.interrupts?.map((i) => i.id)).toEqual([`twice-same#w${wait}/item/run_south`, `twice-same#w${wait}/item/run_east`]);
    expect(view.team?.map((i) => [i.item, i.status])).toEqual([
      ['run_south', 'proposed'],
      ['run_east', 'proposed'],
    ]);
    expect(model.started.size).toBe(0);
  });

  it('another answer: refused, and applied to no other item', async () => {
    const { race, wait } = await racedThread('twice-other');
    const { events, view } = await race({ approved: true }, { type: 'user_rejected_next_step', item: 'run_north', reason: 'No.', wait });
    expect(events.find((e) => e.type === 'RUN_ERROR')).toMatchObject({ code: 'event_refused' });
    expect(view.team?.map((i) => [i.item, i.status])).toEqual([
      ['run_south', 'proposed'],
      ['run_east', 'proposed'],
    ]);
  });
});
