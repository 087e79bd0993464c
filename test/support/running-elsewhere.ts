/**
 * A session another process runs: a runtime of its own on the shared store, its model call
 * hanging until the session is stopped. For tests of what a second process (a server) says
 * to a send meanwhile.
 */
import type { Model } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { Session } from '../../src/runtime/session.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { until } from './cli-process.js';

/** A model call that never answers (until the session is stopped). */
export const hanging: Model = {
  label: 'hangs',
  complete: ({ signal }) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
};

/** A `tiny` session mid model call in another runtime on `store`, stored as running; `stop()` ends it. */
export async function runningElsewhere(store: SessionStore): Promise<{ session: Session; stop: () => Promise<void> }> {
  const session = await createRuntime({ model: hanging, store }).createSession({ packageId: 'tiny' });
  const sent = session.send({ type: 'user_submitted_input', text: 'hello' }).catch(() => {});
  await until(async () => (await store.list()).sessions.find((s) => s.id === session.id && s.state.startsWith('running')), 'the stored session to run');
  return {
    session,
    stop: async () => {
      session.stop();
      await sent;
    },
  };
}
