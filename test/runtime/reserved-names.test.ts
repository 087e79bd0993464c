/**
 * No person acts under the journal's own names: `steward`, `system` and the session's worker
 * ids are refused as `by` (and `via`) by `session.send()`, which every entry point goes through.
 */
import { expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';

it('refuses a reserved `by` with invalid_event, naming the names and the fix; nothing changes', async () => {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const steward = await session.send({ type: 'user_submitted_input', by: 'steward', text: 'Green tea.' });
  expect(steward.ok).toBe(false);
  expect(!steward.ok && steward.error).toEqual({
    code: 'invalid_event',
    message:
      'Invalid event: by: "steward" is a reserved name: steward, system and the worker ids of this session\'s package (echo, summarize) ' +
      'name the runtime and its agents in the journal, so no person may act under them. Give the name of who acted (CLI: --as NAME; steward serve: a token with another name), or leave by out.',
  });
  expect(steward.view.waitingReason).toBe('intake');
  // Another case, width or ligature of a reserved name reads the same; a hidden or line-breaking character is no name at all.
  for (const by of ['System', ' echo ', 'SUMMARIZE', 'Ｓteward', 'ſteward', 'ｅｃｈｏ', 'steward\u200b', 'ste\u202eward', 'x\nsteward']) {
    const result = await session.send({ type: 'user_submitted_input', by, text: 'Green tea.' });
    expect(result.ok ? 'accepted' : result.error.code, by).toBe('invalid_event');
  }
  expect((await session.send({ type: 'user_submitted_input', via: 'steward', text: 'Green tea.' })).ok).toBe(false);

  const input = await session.send({ type: 'user_submitted_input', by: 'alice', text: 'Green tea.' });
  expect(input.ok && input.view.waitingReason).toBe('approve_step');
  const review = await session.send({ type: 'user_approved_next_step', by: 'alice' });
  expect(review.ok && review.view.waitingReason).toBe('review_artifact');
  // The user's text may not be recorded as written by the worker.
  const forged = await session.send({ type: 'user_accepted_artifact', by: 'echo', artifactId: review.view.artifact!.id, edits: { note: 'Mine.' } });
  expect(!forged.ok && forged.error.code).toBe('invalid_event');
  expect(forged.view.waitingReason).toBe('review_artifact');
  expect(forged.view.blackboard.find((b) => b.tag === 'note')).toEqual({ tag: 'note', version: 1, writtenBy: 'echo' });
});

it('refuses the worker ids of every package a session may still choose (no package yet)', async () => {
  const runtime = createRuntime({ model: new DemoModel() });
  const session = await runtime.createSession();
  const result = await session.send({ type: 'user_selected_package', by: 'drafter', packageId: 'short-story' });
  expect(!result.ok && result.error.message).toContain('by: "drafter" is a reserved name');
  expect(result.view.state).toBe('waiting_user.skill_selection');
});
