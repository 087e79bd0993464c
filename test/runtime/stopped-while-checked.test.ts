/**
 * A session object stopped while an event of a send is being checked (asynchronously: a tool
 * call's edited arguments, a form's answers) does not take it, and nothing says it was
 * accepted: `steward serve` answers an async send `202` from `onAccepted`, and replaces a
 * stale kept copy by stopping it (held-sessions.ts, restart) while a send may be checked.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import type { Session } from '../../src/runtime/session.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

/** Makes the session's event check asynchronous, and stops the session while it runs. */
function stopWhileChecking(session: Session): void {
  (session as unknown as { checkEvent: () => Promise<string | null> }).checkEvent = async () => {
    session.stop();
    return null;
  };
}

describe('an event checked while its session stops', () => {
  it('is refused as sent to a stopped session, never accepted, and not journalled', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Go on?' })] }]);
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const entries = (await store.journal(session.id)).length;
    stopWhileChecking(session);
    let accepted = 0;
    const result = await session.send({ type: 'user_submitted_input', text: 'Hello.' }, { onAccepted: () => (accepted += 1) });
    expect(result).toMatchObject({ ok: false, error: { code: 'session_stopped' } });
    expect(accepted).toBe(0);
    expect(await store.journal(session.id)).toHaveLength(entries);
    expect(model.remaining).toBe(1);
  });
});
