/**
 * `through` says where a decision came from, not what it decided: the same decision sent again
 * through another surface is a harmless repeat, and it is not text a person wrote.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { userTextChars } from '../../src/core/limits.js';
import { decisionDigest } from '../../src/core/machines/waits.js';
import { auditModel } from './audit-session.js';

describe('through', () => {
  it('is not part of the decision: a repeat through another surface is a repeat', async () => {
    const event = { type: 'user_rejected_next_step', reason: 'No.' } as const;
    const [cli, rest] = [
      { ...event, through: 'cli' },
      { ...event, through: 'rest' },
    ];
    expect(decisionDigest(cli)).toBe(decisionDigest(rest));
    expect(userTextChars({ ...event, through: 'inspector' })).toBe(userTextChars(event));
    // Nor are the groups a surface stamps: who decided, not what they wrote.
    expect(userTextChars({ ...event, groups: ['admin'] })).toBe(userTextChars(event));
    expect(decisionDigest({ ...event, groups: ['ops'] } as { type: string })).toBe(decisionDigest(event));

    const store = new MemoryStore();
    const session = await createRuntime({ model: auditModel(), store }).createSession({ packageId: 'short-story' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    const wait = session.view().wait!;
    expect((await session.send({ ...event, wait, through: 'cli' })).ok).toBe(true);
    expect(await session.send({ ...event, wait, through: 'rest' })).toMatchObject({ ok: true, repeated: true });
  });
});
