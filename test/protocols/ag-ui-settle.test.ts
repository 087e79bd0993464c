/**
 * An AG-UI run reports success only when the thread is done: a run whose own answer is over
 * while another client's send drives the thread again waits for where that leads, and ends
 * with that wait's interrupt. Deterministic: the host's send is wrapped so that the other
 * send starts (its model call held) right after this run's send resolves and before the run
 * reads the thread again.
 */
import type { BaseEvent } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { runAgUi } from '../../src/protocols/ag-ui/run.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SessionHost } from '../../src/serve/session-host.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { useTempDir } from '../support/temp.js';
import { runInput } from './protocol-server.js';

const temp = useTempDir('steward-ag-ui-settle-');

/** The demo model, held at its next call once `hold()` is called, until `release()`. */
function heldDemo(): { model: Model; hold: () => Promise<void>; release: () => void } {
  const demo = new DemoModel();
  let armed: { reached: () => void; go: Promise<void> } | null = null;
  let release = () => {};
  return {
    model: {
      label: demo.label,
      async complete(request: ModelRequest): Promise<ModelReply> {
        const held = armed;
        armed = null;
        if (held) {
          held.reached();
          await held.go;
        }
        return demo.complete(request);
      },
    },
    hold: () =>
      new Promise<void>((reached) => {
        armed = { reached, go: new Promise<void>((go) => (release = go)) };
      }),
    release: () => release(),
  };
}

describe('an AG-UI run and a thread another send drives', () => {
  it('ends with the next interrupt, not success, when the thread runs again as the run ends', async () => {
    const store = new SqliteStore(temp.path('settle.db'));
    const demo = heldDemo();
    const runtime = createRuntime({ model: demo.model, store });
    const host = new SessionHost(runtime, store);
    const thread = 'settle-1';
    const events: BaseEvent[] = [];
    try {
      await runAgUi(
        { runtime, store, host },
        'short-story',
        runInput(thread, 'r1', { messages: [{ id: 'u1', role: 'user', content: 'A lighthouse story.' }] }),
        {},
        (e) => events.push(e),
      );
      const first = events.findLast((e) => e.type === 'RUN_FINISHED') as unknown as { outcome: { interrupts: { id: string }[] } };
      const approval = first.outcome.interrupts[0]!;

      // Right after this run's send resolves, another client answers the next wait; its model call is held.
      let other: Promise<unknown> | null = null;
      const racing = new Proxy(host, {
        get(target, key, receiver) {
          if (key !== 'send') return Reflect.get(target, key, receiver) as unknown;
          return async (...args: Parameters<SessionHost['send']>) => {
            const result = await target.send(...args);
            const view = (await target.view(thread)).view;
            const reached = demo.hold();
            other = target.send(thread, { type: 'user_accepted_artifact', artifactId: view.artifact!.id, wait: view.wait });
            await reached;
            setTimeout(() => demo.release(), 50);
            return result;
          };
        },
      });
      events.length = 0;
      await runAgUi(
        { runtime, store, host: racing },
        'short-story',
        runInput(thread, 'r2', { resume: [{ interruptId: approval.id, status: 'resolved', payload: { approved: true } }] }),
        {},
        (e) => events.push(e),
      );
      await other;
      const finished = events.findLast((e) => e.type === 'RUN_FINISHED') as
        { outcome: { type: string; interrupts?: { id: string; reason: string }[] } } | undefined;
      expect(events.find((e) => e.type === 'RUN_ERROR')).toBeUndefined();
      expect(finished?.outcome.type).toBe('interrupt');
      // The wait the other send led to (the manager's next step, after the acceptance), open now.
      const now = (await host.view(thread)).view;
      expect(now.phase).toBe('waiting_user');
      expect(finished?.outcome.interrupts?.[0]?.id).toBe(`${thread}#w${now.wait}`);
    } finally {
      await host.drain(1_000);
      await store.close();
    }
  });

  it('a resume of a thread saved mid-run that nothing runs (its process stopped) is refused at once: thread_running, naming resume', async () => {
    const db = temp.path('stuck.db');
    // Another process: its model call never ends, and it stops with the session saved mid-run.
    const elsewhere = new SqliteStore(db);
    const stuck = await createRuntime({ model: { label: 'never', complete: () => new Promise<never>(() => {}) }, store: elsewhere }).createSession({
      packageId: 'short-story',
      id: 'stuck-1',
    });
    const interruptId = `stuck-1#w${stuck.view().wait}`;
    void stuck.send({ type: 'user_submitted_input', text: 'A lighthouse story.' });
    await expect.poll(async () => (await elsewhere.journal('stuck-1')).at(-1)?.state).toMatch(/^running/);
    await stuck.close();
    await elsewhere.close();

    const store = new SqliteStore(db);
    const runtime = createRuntime({ model: new DemoModel(), store });
    const host = new SessionHost(runtime, store);
    const events: BaseEvent[] = [];
    try {
      await runAgUi(
        { runtime, store, host },
        'short-story',
        runInput('stuck-1', 'r1', { resume: [{ interruptId, status: 'resolved', payload: { text: 'Go.' } }] }),
        {},
        (e) => events.push(e),
      );
      expect(events).toEqual([
        expect.objectContaining({ type: 'RUN_ERROR', code: 'thread_running', message: expect.stringContaining('steward resume stuck-1') }),
      ]);
    } finally {
      await host.drain(1_000);
      await store.close();
    }
  });
});
