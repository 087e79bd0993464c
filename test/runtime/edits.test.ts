/**
 * Issue 12, parts 1–3: editing a step before approving it, editing an artifact while
 * accepting it, and who did what (`by`, journalled; `steward log --format jsonl` reads it).
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { ChatMessage, ModelRequest } from '../../src/index.js';
import { auditRecords } from '../../src/cli/commands/log.js';

const text = (m: ChatMessage | undefined) => (m && typeof m.content === 'string' ? m.content : '');

/** Valid for the API: each assistant tool call answered once, right after; no orphan tool message. */
function expectValidTranscript(messages: readonly ChatMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    expect(m.role, `[${i}] orphan tool message`).not.toBe('tool');
    if (m.role !== 'assistant' || !m.tool_calls) continue;
    const ids = m.tool_calls.map((c) => c.id);
    const results = messages.slice(i + 1, i + 1 + ids.length);
    expect(results.map((r) => (r.role === 'tool' ? r.tool_call_id : r.role))).toEqual(ids);
    i += ids.length;
  }
}

const STORY_BRIEF = '# Brief\nA lighthouse ghost.';

function approvalScript() {
  return new ScriptedModel([
    {
      agent: 'manager',
      toolCalls: [scriptedCall('run_worker', { workerId: 'drafter', reason: 'Write the story.', requiresApproval: true, roleId: 'genre' }, 'call_rw')],
    },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { draft: 'The draft.' } })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
  ]);
}

/** A short-story session whose brief-writer submitted STORY_BRIEF: artifact a1 waits for review. */
async function briefUnderReview() {
  const model = new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'brief-writer', reason: 'Brief it.', requiresApproval: false })] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { brief: STORY_BRIEF } })] },
  ]);
  const session = await createRuntime({ model }).createSession({ packageId: 'short-story' });
  await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
  return session;
}

describe('edit before approving', () => {
  it('runs the worker with the edited reason and role; the manager sees its own call and a result naming the edits', async () => {
    const model = approvalScript();
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'short-story' });
    let result = await session.send({ type: 'user_submitted_input', text: 'A ghost story.', by: 'alice' });
    expect(result.view).toMatchObject({ waitingReason: 'approve_step', pendingStep: { workerId: 'drafter', roleId: 'genre', reason: 'Write the story.' } });

    result = await session.send({ type: 'user_approved_next_step', by: 'bob', edits: { reason: 'Write it quietly, 1,000 words.', roleId: 'literary' } });
    expect(result.ok).toBe(true);
    const worker = model.calls[1]! as ModelRequest;
    expect(worker.agent).toBe('worker');
    const brief = text(worker.messages[1]);
    expect(brief).toContain('# Your task\nWrite it quietly, 1,000 words.');
    expect(brief).toContain('## Role: literary');
    expect(brief).not.toContain('Write the story.');
    expect(result.view.pendingStep).toMatchObject({
      reason: 'Write it quietly, 1,000 words.',
      roleId: 'literary',
      proposed: { reason: 'Write the story.', roleId: 'genre', by: 'bob' },
    });

    result = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1' });
    expect(result.view.phase).toBe('done');
    const manager = model.calls[2]!;
    const call = manager.messages.find((m) => m.role === 'assistant' && m.tool_calls?.some((c) => c.id === 'call_rw'));
    // Its own call, unchanged…
    expect(call && call.role === 'assistant' && JSON.parse(call.tool_calls![0]!.function.arguments)).toEqual({
      workerId: 'drafter',
      reason: 'Write the story.',
      requiresApproval: true,
      roleId: 'genre',
    });
    // …its tool result as it was, and then the user's message naming the edits.
    const at = manager.messages.findIndex((m) => m.role === 'tool' && m.tool_call_id === 'call_rw');
    expect(text(manager.messages[at])).toBe('Proposed to the user; you will hear whether they approved it.');
    expect(manager.messages[at + 1]).toEqual({
      role: 'user',
      content:
        'The user (bob) approved your run_worker(drafter) with edits: reason "Write it quietly, 1,000 ' +
        'words." (you proposed "Write the story."); role "literary" (you proposed "genre"). The worker runs ' +
        'with the edited step; you will hear when the user has reviewed its artifact.',
    });
    expectValidTranscript(manager.messages.slice(1));

    // The journal holds the edits and who acted.
    const journal = await store.journal(session.id);
    expect(journal.find((e) => e.type === 'user_approved_next_step')?.payload).toMatchObject({
      by: 'bob',
      edits: { reason: 'Write it quietly, 1,000 words.', roleId: 'literary' },
    });
  });

  it("refuses a role the worker does not have, with the guard's message and the chart's reading; nothing changes", async () => {
    const runtime = createRuntime({ model: approvalScript() });
    const session = await runtime.createSession({ packageId: 'short-story' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    const before = JSON.stringify({ ...session.actorRef.getSnapshot().context, rejections: [] });
    const result = await session.send({ type: 'user_approved_next_step', edits: { roleId: 'poet' } });
    expect(result.ok).toBe(false);
    expect(result.ok || result.error).toMatchObject({
      code: 'event_refused',
      message: 'Role "poet" is not a role of worker "drafter"; its roles: literary, genre. Nothing was approved.',
      state: 'waiting_user.approve_step',
      enabled: ['user_approved_next_step', 'user_rejected_next_step'],
    });
    expect(JSON.stringify({ ...session.actorRef.getSnapshot().context, rejections: [] })).toBe(before);
    // Empty edits are refused by the schema.
    expect((await session.send({ type: 'user_approved_next_step', edits: {} })).ok).toBe(false);
  });
});

describe('edit an artifact while accepting it', () => {
  it("writes user versions (writtenBy = by), keeps the worker's readable, accepts with them and tells the manager", async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'brief-writer', reason: 'Brief it.', requiresApproval: false })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { brief: STORY_BRIEF } })] },
      { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['brief'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
    ]);
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'short-story' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    const mine = '# Brief\nA lighthouse ghost, told by the lamp.';
    const result = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1', by: 'carol', edits: { brief: mine } });
    expect(result.ok).toBe(true);
    const context = session.actorRef.getSnapshot().context;
    // The worker's version stays readable (the context may have archived its body).
    expect((await session.tagVersions('brief')).map((v) => [v.version, v.writtenBy, v.body])).toEqual([
      [1, 'brief-writer', STORY_BRIEF],
      [2, 'carol', mine],
    ]);
    expect(context.artifacts[0]).toMatchObject({ id: 'a1', status: 'accepted', tags: { brief: 2 } });
    const told = model.calls[2]!.messages.at(-1);
    expect(text(told)).toBe(
      'The user accepted artifact a1 from brief-writer (brief v2). The user (carol) edited brief (now v2, ' +
        "written by carol; the worker's v1 stays readable): read the new version before building on it. Plan " +
        'the next step.',
    );
    // read_blackboard gives the manager the user's version.
    const read = model.calls[3]!.messages.at(-1);
    expect(text(read)).toContain(mine);
  });

  it('refuses edits of tags outside the artifact, and bodies over the artifact limit; keys are prototype-safe', async () => {
    const session = await briefUnderReview();
    const outside = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1', edits: { outline: 'x' } });
    expect(outside.ok || outside.error.message).toBe('Edits name "outline", not a tag of artifact "a1"; its tags: brief. Nothing was accepted.');
    const proto = await session.send(JSON.parse('{"type":"user_accepted_artifact","artifactId":"a1","edits":{"__proto__":"x"}}'));
    expect(proto.ok || proto.error.message).toContain('Edits name "__proto__", not a tag of artifact "a1"');
    const huge = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1', edits: { brief: 'x'.repeat(200_001) } });
    expect(huge.ok || huge.error.code).toBe('invalid_event');
    expect(huge.ok || huge.error.message).toContain('artifactBodyChars');
    expect(session.view()).toMatchObject({ waitingReason: 'review_artifact', artifact: { tags: [{ tag: 'brief', version: 1 }] } });
    expect(Object.getPrototypeOf(session.actorRef.getSnapshot().context.blackboard)).toBe(Object.prototype);
  });

  it('refuses an edited body that is empty or only whitespace; nothing is accepted', async () => {
    const session = await briefUnderReview();
    for (const body of ['', '  \n\t ']) {
      const result = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1', edits: { brief: body } });
      expect(result.ok || result.error.code).toBe('invalid_event');
      expect(result.ok || result.error.message).toContain('edits.brief: must not be empty');
    }
    expect(session.view()).toMatchObject({ waitingReason: 'review_artifact', artifact: { tags: [{ tag: 'brief', version: 1 }] } });
  });
});

describe('who did what', () => {
  it('journals `by` with each event and exports the audit trail with the state before and after', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: approvalScript(), store });
    const session = await runtime.createSession({ packageId: 'short-story' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.', by: 'alice' });
    await session.send({ type: 'user_approved_next_step', by: 'bob' });
    expect(session.view().blackboard[0]).toEqual({ tag: 'request', version: 1, writtenBy: 'alice' });
    const audit = auditRecords(await store.journal(session.id), null);
    expect(audit.map((r) => [r.seq, r.by, r.type, r.stateBefore, r.stateAfter])).toEqual([
      [1, 'steward', 'created', null, 'waiting_user.intake'],
      [2, 'alice', 'user_submitted_input', 'waiting_user.intake', 'running.manager.thinking'],
      [3, 'steward', 'xstate.done.actor.managerTurn', 'running.manager.thinking', 'waiting_user.approve_step'],
      [4, 'bob', 'user_approved_next_step', 'waiting_user.approve_step', 'running.worker.thinking'],
      [5, 'steward', 'xstate.done.actor.workerTurn', 'running.worker.thinking', 'waiting_user.review_artifact'],
    ]);
    // `by` is bounded by the event schema.
    const long = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1', by: 'x'.repeat(121) });
    expect(long.ok || long.error.code).toBe('invalid_event');
  });
});
