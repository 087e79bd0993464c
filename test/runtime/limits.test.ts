/**
 * Size limits (src/core/limits.ts): a model call over a limit is refused by rule 2 with a message
 * naming the limit (the model retries); a user event over a limit is refused with
 * `limit_exceeded` naming the limit and its setting; every refusal a model reads is bounded.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { clip, DEFAULT_LIMITS, quotedSetting, resolveLimits } from '../../src/core/limits.js';
import { durabilityFromEnv } from '../../src/store/session-store.js';

const request = { type: 'user_submitted_input', text: 'A note about tea' } as const;
const toolResults = (model: ScriptedModel, i: number) => model.calls[i]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('limits on model calls', () => {
  it('refuses an artifact body over artifactBodyChars by rule 2, naming the limit; the retry goes through', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'x'.repeat(DEFAULT_LIMITS.artifactBodyChars + 1) } })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A short note.' } })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const result = await session.send(request);
    expect(result.view.waitingReason).toBe('review_artifact');
    const [refusal] = toolResults(model, 2).slice(-1);
    expect(refusal).toMatch(/^Error: Invalid arguments for submit: outputs\.note: longer than 200000 characters \(the artifactBodyChars limit\)/);
    model.assertComplete();
  });

  it('refuses a 10,000-tag submit naming tagsPerSubmit, and the refusal in the next prompt stays short', async () => {
    const outputs = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`tag_number_${i}`, 'x']));
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A short note.' } })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    await session.send(request);
    const [refusal] = toolResults(model, 2).slice(-1);
    expect(refusal).toContain('tagsPerSubmit');
    expect(refusal!.length).toBeLessThan(DEFAULT_LIMITS.refusalMessageChars + 100);
    model.assertComplete();
  });

  it('bounds every refusal message: 30 long undeclared tags (rule 4) are not all listed', async () => {
    // Under the tag-count limit, over nothing else: rule 4 lists the undeclared tags.
    const outputs = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`undeclared_tag_with_a_rather_long_name_${i}_${'y'.repeat(60)}`, 'x']));
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A short note.' } })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    await session.send(request);
    const [refusal] = toolResults(model, 2).slice(-1);
    expect(refusal).toMatch(/^Error: You may only write your declared output tags \(note\)/);
    expect(refusal).toMatch(/more characters left out\)$/);
    expect(refusal!.length).toBeLessThan(DEFAULT_LIMITS.refusalMessageChars + 100);
  });

  it('refuses tool arguments over toolArgumentsChars, naming the limit', async () => {
    const questions = Array.from({ length: 10 }, () => 'q'.repeat(DEFAULT_LIMITS.artifactBodyChars));
    const model = new ScriptedModel([
      {
        agent: 'manager',
        toolCalls: [
          scriptedCall('ask_user', {
            message: 'm'.repeat(DEFAULT_LIMITS.artifactBodyChars),
            assessment: 'a'.repeat(DEFAULT_LIMITS.artifactBodyChars),
            questions,
          }),
        ],
      },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Shorter.' })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const result = await session.send(request);
    expect(result.view.message).toBe('Shorter.');
    expect(toolResults(model, 1)[0]).toContain('toolArgumentsChars');
  });
});

describe('limits on user events', () => {
  it('refuses user text over userTextChars with limit_exceeded naming the limit and the setting; nothing is stored', async () => {
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'ok' })] }]);
    const runtime = createRuntime({ model, limits: { userTextChars: 1_000 } });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const refused = await session.send({ type: 'user_submitted_input', text: 'z'.repeat(1_001) });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toEqual({
      code: 'limit_exceeded',
      message: expect.stringMatching(
        /^The text of user_submitted_input has 1001 characters; the limit is 1000 \(userTextChars, set with createRuntime\(\{ limits: \{ userTextChars \} \}\), env STEWARD_MAX_USER_TEXT\)/,
      ),
    });
    expect(refused.view.blackboard).toEqual([]);
    expect(model.calls).toHaveLength(0);
    const ok = await session.send({ type: 'user_submitted_input', text: 'z'.repeat(1_000) });
    expect(ok.ok).toBe(true);
  });

  it('counts all the answers of one event together', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), limits: { userTextChars: 10 } });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const refused = await session.send({ type: 'user_answered_questions', answers: { q1: '123456', q2: '123456' } });
    expect(!refused.ok && refused.error.code).toBe('limit_exceeded');
  });

  it('a wrong limit is a UserError naming it', () => {
    expect(() => createRuntime({ model: new ScriptedModel([]), limits: { userTextChars: 0 } })).toThrow(/invalid limits \(userTextChars: /);
    expect(() => resolveLimits({ userTextChar: 5 })).toThrow(/Unrecognized key/);
  });

  it('clip keeps short text and says how much it left out of long text', () => {
    expect(clip('short', 10)).toBe('short');
    expect(clip('x'.repeat(15), 10)).toBe(`${'x'.repeat(10)}… (5 more characters left out)`);
  });
});

describe('a setting quoted in an error', () => {
  it('is quoted as given, and a long one is clipped after 40 characters, outside the quotes', () => {
    expect(quotedSetting('Sometimes')).toBe('"Sometimes"');
    expect(quotedSetting('y'.repeat(40))).toBe(`"${'y'.repeat(40)}"`);
    expect(quotedSetting('x'.repeat(500))).toBe(`"${'x'.repeat(40)}…" (460 more characters left out)`);
    expect(() => durabilityFromEnv({ STEWARD_DURABILITY: 'Every-Event' })).toThrow(/STEWARD_DURABILITY is "Every-Event", which is not a durability/);
  });
});
