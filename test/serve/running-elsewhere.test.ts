/**
 * A send to a session another process is running (no leases: SQLite, memory) is a 409
 * that says how to wait, and which command resumes the session if that process is gone.
 */
import { expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SessionHost } from '../../src/serve/session-host.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { hanging, runningElsewhere } from '../support/running-elsewhere.js';

it('a send to a session running in another process: 409 session_running_elsewhere, advising `steward resume ID`', async () => {
  const store = new MemoryStore();
  const { session, stop } = await runningElsewhere(store);

  const host = new SessionHost(createRuntime({ model: hanging, store }), store);
  const error = await host.send(session.id, { type: 'user_submitted_input', text: 'me too' }).catch((e: unknown) => e);
  expect(error).toMatchObject({ status: 409, code: 'session_running_elsewhere' });
  const message = (error as Error).message;
  expect(message).toMatch(new RegExp(`^Session "${session.id}" is running \\(running\\.[\\w.]+\\) in another process\\. Wait until it waits for you`));
  expect(message).toContain(`resume it with \`steward resume ${session.id}\``);
  expect(message).not.toContain('run --session');

  await host.drain(0);
  await stop();
});
