/**
 * Refused events are journalled whatever the reason: the machine's refusals (an event the
 * state does not take), a malformed event, one over a size limit (without its text), and
 * one sent to a session that is done.
 */
import { expect, it } from 'vitest';
import { createRuntime, MemoryStore, type UserEvent } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

it('journals every refused event, with the code and reason, and never the oversized text', async () => {
  const store = new MemoryStore();
  const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done already.' })] }]);
  const runtime = createRuntime({ model, store, limits: { userTextChars: 50 } });
  const session = await runtime.createSession({ packageId: 'tiny' });

  expect((await session.send({ type: 'user_approved_next_step' })).ok).toBe(false); // the machine refuses it
  expect((await session.send({ type: 'user_submitted_input', text: '' })).ok).toBe(false); // malformed
  expect((await session.send({ type: 'no_such_event' } as unknown as UserEvent)).ok).toBe(false); // malformed
  expect((await session.send({ type: 'user_submitted_input', text: 'w'.repeat(51) })).ok).toBe(false); // over the limit
  expect((await session.send({ type: 'user_submitted_input', text: 'Go' })).ok).toBe(true);
  expect(session.view().phase).toBe('done');
  expect((await session.send({ type: 'user_submitted_input', text: 'More?' })).ok).toBe(false); // done

  const journal = await store.journal(session.id);
  const refused = journal.filter((e) => e.kind === 'event' && (e.payload as { refused?: unknown }).refused !== undefined);
  expect(refused.map((e) => [e.type, (e.payload as { refused: { code: string } }).refused.code, e.state])).toEqual([
    ['user_submitted_input', 'invalid_event', 'waiting_user.intake'],
    ['no_such_event', 'invalid_event', 'waiting_user.intake'],
    ['user_submitted_input', 'limit_exceeded', 'waiting_user.intake'],
    ['user_submitted_input', 'event_refused', 'done'],
  ]);
  // The machine's own refusal is journalled as the event itself, as before.
  expect(journal.find((e) => e.type === 'user_approved_next_step')?.state).toBe('waiting_user.intake');
  expect(JSON.stringify(journal)).not.toContain('w'.repeat(51));
});
