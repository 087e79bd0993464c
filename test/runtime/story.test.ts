/**
 * One short story from the first request to `done`, with the bundled short-story package:
 * every kind of wait a user meets, checked through the public view and the prompts the
 * agents received.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { ChatMessage, ModelRequest, Session, SessionView, UserEvent } from '../../src/index.js';

const REQUEST = 'A ghost story set in a lighthouse off the Norwegian coast.';
const CLARIFICATION = 'For adults, about 2,000 words, quietly eerie rather than gory.';
const BRIEF = [
  '# Brief: The Last Light',
  '## Premise',
  'Ines, the last keeper of the Skomvær light, must decide whether the voice in the lamp room is her drowned brother.',
  '## Assumptions',
  '- Set in 1962, the year before automation.',
].join('\n\n');
const OUTLINE = [
  '# Outline: The Last Light',
  '## Scene 1 — The log (~400 words)',
  '- **Turn:** the entries stop making sense.',
  '## Scene 5 — The lamp (~400 words)',
  '- **Turn:** she lets the light go out.',
].join('\n\n');
const DRAFT_1 =
  '# The Last Light\n\nThe lamp had not failed in forty years, and the keeper meant to keep it that way.\n\n***\n\nThe second night dragged on and on.';
const DRAFT_2 = '# The Last Light\n\nInes had kept the lamp for forty years, and the lamp had kept her.\n\n***\n\nOn the second night the log wrote itself.';
const SUMMARY = 'The Last Light: a quiet, literary ghost story of about 2,000 words, drafted and revised.';

/** Sends a user event that must be accepted; returns the view at the next wait. */
async function step(session: Session, event: UserEvent): Promise<SessionView> {
  const result = await session.send(event);
  if (!result.ok) throw new Error(`${event.type} was refused: ${result.error.message}`);
  return result.view;
}

const text = (m: ChatMessage | undefined) => (m && typeof m.content === 'string' ? m.content : '');
const systemOf = (r: ModelRequest) => text(r.messages[0]);
/** A worker's brief: the user message right after its skill prompt. */
const briefOf = (r: ModelRequest) => text(r.messages[1]);
const lastOf = (r: ModelRequest) => r.messages.at(-1);
const everything = (r: ModelRequest) => r.messages.map(text).join('\n');

describe('a short story from intake to done', () => {
  it('clarifies, plans with approval, asks, revises and finishes', async () => {
    const model = new ScriptedModel([
      /* 0 */ { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Who is it for, and how long should it be?' })] },
      /* 1 */ { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'An eerie 2,000-word ghost story for adults. Shall I start?' })] },
      /* 2 */ {
        agent: 'manager',
        toolCalls: [
          scriptedCall('run_worker', {
            workerId: 'brief-writer',
            reason: 'Fix the creative decisions for a quiet lighthouse ghost story.',
            requiresApproval: true,
          }),
        ],
      },
      /* 3 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { brief: BRIEF } })] },
      /* 4 */ {
        agent: 'manager',
        toolCalls: [scriptedCall('run_worker', { workerId: 'outliner', reason: 'Plan three scenes from the brief.', requiresApproval: true })],
      },
      /* 5 */ {
        agent: 'manager',
        toolCalls: [scriptedCall('run_worker', { workerId: 'outliner', reason: 'Plan five scenes from the brief.', requiresApproval: false })],
      },
      /* 6 */ { agent: 'worker', toolCalls: [scriptedCall('ask_user', { questions: ['Does Ines survive?', 'Is the ghost real or imagined?'] })] },
      /* 7 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { outline: OUTLINE } })] },
      /* 8 */ {
        agent: 'manager',
        toolCalls: [
          scriptedCall('run_worker', { workerId: 'drafter', reason: 'Write the full story from the outline.', requiresApproval: false, roleId: 'literary' }),
        ],
      },
      /* 9 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { draft: DRAFT_1 } })] },
      /* 10 */ {
        agent: 'worker',
        toolCalls: [scriptedCall('submit', { outputs: { draft: DRAFT_2 } }), scriptedCall('ask_user', { questions: ['Keep the open ending?'] })],
      },
      /* 11 */ { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['draft'] })] },
      /* 12 */ { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: SUMMARY })] },
    ]);
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'short-story' });
    const request = (i: number, agent: 'manager' | 'worker') => {
      const r = model.calls[i]!;
      expect(r.agent, `call #${i}`).toBe(agent);
      return r;
    };

    // ── Intake: the first request, one clarification, then the user confirms ───────────
    expect(session.view()).toMatchObject({ phase: 'waiting_user', waitingReason: 'intake', packageId: 'short-story', blackboard: [] });

    let view = await step(session, { type: 'user_submitted_input', text: REQUEST });
    expect(view).toMatchObject({ waitingReason: 'intake', message: 'Who is it for, and how long should it be?', burst: 1 });
    expect(view.blackboard).toEqual([{ tag: 'request', version: 1, writtenBy: 'user' }]);
    expect(systemOf(request(0, 'manager'))).toContain('Intake not confirmed yet');

    view = await step(session, { type: 'user_submitted_input', text: CLARIFICATION });
    expect(view).toMatchObject({ waitingReason: 'intake', message: 'An eerie 2,000-word ghost story for adults. Shall I start?' });
    expect(view.blackboard).toEqual([{ tag: 'request', version: 2, writtenBy: 'user' }]);
    expect(lastOf(request(1, 'manager'))).toEqual({ role: 'user', content: CLARIFICATION });

    // ── Approve a step: the brief writer runs and its artifact waits for review ─────────
    view = await step(session, { type: 'user_confirmed_intake' });
    expect(systemOf(request(2, 'manager'))).toContain('Intake confirmed');
    expect(lastOf(request(2, 'manager'))).toEqual({ role: 'user', content: 'The user confirmed the request as it stands: plan the work.' });
    expect(view).toMatchObject({
      waitingReason: 'approve_step',
      pendingStep: { workerId: 'brief-writer', reason: 'Fix the creative decisions for a quiet lighthouse ghost story.', requiresApproval: true },
      acceptedEvents: ['user_approved_next_step', 'user_rejected_next_step'],
    });
    expect(view.message).toBeUndefined(); // the clarification is spent

    view = await step(session, { type: 'user_approved_next_step' });
    const briefWriter = request(3, 'worker');
    expect(systemOf(briefWriter)).toMatch(/^You are the brief writer of a short-story team\./);
    expect(briefOf(briefWriter)).toContain('# Your task\nFix the creative decisions for a quiet lighthouse ghost story.');
    // The worker reads the request with the clarification: nothing the user said is lost.
    expect(briefOf(briefWriter)).toContain(`## Input "request" (v2)\n${REQUEST}\n\n${CLARIFICATION}`);
    expect(briefOf(briefWriter)).toContain('## Output tags\nbrief');
    expect(briefOf(briefWriter)).not.toContain('## Role');
    expect(view).toMatchObject({
      waitingReason: 'review_artifact',
      artifact: { id: 'a1', workerId: 'brief-writer', status: 'pending_review', tags: [{ tag: 'brief', version: 1, body: BRIEF }] },
    });
    expect(view.artifact?.questions).toBeUndefined();

    // ── Reject a proposed step: the reason reaches the manager, which proposes again ────
    view = await step(session, { type: 'user_accepted_artifact', artifactId: 'a1' });
    const afterBrief = request(4, 'manager');
    expect(lastOf(afterBrief)).toEqual({ role: 'user', content: 'The user accepted artifact a1 from brief-writer (brief v1). Plan the next step.' });
    expect(systemOf(afterBrief)).toContain(`- brief v1 (${BRIEF.length} chars, by brief-writer): # Brief: The Last Light`);
    expect(systemOf(afterBrief)).toContain('- a1 by brief-writer: accepted (brief v1)');
    expect(view).toMatchObject({ waitingReason: 'approve_step', pendingStep: { workerId: 'outliner', reason: 'Plan three scenes from the brief.' } });

    // ── Worker questions: the outliner asks before writing anything ─────────────────────
    view = await step(session, { type: 'user_rejected_next_step', reason: 'Five scenes, please: it needs room to breathe.' });
    expect(lastOf(request(5, 'manager'))).toEqual({
      role: 'user',
      content: 'The user rejected the proposed step run_worker(outliner): Five scenes, please: it needs room to breathe.',
    });
    const outliner = request(6, 'worker');
    expect(systemOf(outliner)).toMatch(/^You are the outliner of a short-story team\./);
    expect(briefOf(outliner)).toContain('# Your task\nPlan five scenes from the brief.');
    expect(briefOf(outliner)).toContain(`## Input "request" (v2)\n${REQUEST}`);
    expect(briefOf(outliner)).toContain(`## Input "brief" (v1)\n${BRIEF}`);
    expect(view).toMatchObject({
      waitingReason: 'worker_questions',
      pendingStep: { workerId: 'outliner', requiresApproval: false },
      questions: [
        { id: 'q1', text: 'Does Ines survive?' },
        { id: 'q2', text: 'Is the ghost real or imagined?' },
      ],
      acceptedEvents: ['user_answered_questions', 'user_skipped_questions'],
    });
    expect(view.artifacts).toEqual([{ id: 'a1', workerId: 'brief-writer', status: 'accepted' }]);

    view = await step(session, { type: 'user_answered_questions', answers: { q1: 'No.', q2: 'Leave it ambiguous.' } });
    expect(lastOf(request(7, 'worker'))).toEqual({
      role: 'user',
      content: 'The user answered your questions:\n- Does Ines survive?\n  → No.\n- Is the ghost real or imagined?\n  → Leave it ambiguous.',
    });
    expect(view).toMatchObject({
      waitingReason: 'review_artifact',
      artifact: { id: 'a2', workerId: 'outliner', tags: [{ tag: 'outline', version: 1, body: OUTLINE }] },
    });
    expect(view.questions).toBeUndefined();

    // ── A role for the drafter; reject its draft and describe the changes ───────────────
    view = await step(session, { type: 'user_accepted_artifact', artifactId: 'a2' });
    const drafter = request(9, 'worker');
    expect(systemOf(drafter)).toMatch(/^You are the drafter of a short-story team\./);
    expect(briefOf(drafter)).toContain('# Your task\nWrite the full story from the outline.');
    expect(briefOf(drafter)).toContain('## Role: literary\nQuiet, precise literary prose');
    expect(briefOf(drafter)).toContain(`## Input "brief" (v1)\n${BRIEF}`);
    expect(briefOf(drafter)).toContain(`## Input "outline" (v1)\n${OUTLINE}`);
    expect(briefOf(drafter)).not.toContain('## Revision');
    expect(view).toMatchObject({
      waitingReason: 'review_artifact',
      pendingStep: { workerId: 'drafter', roleId: 'literary' },
      artifact: { id: 'a3', workerId: 'drafter', roleId: 'literary', status: 'pending_review', tags: [{ tag: 'draft', version: 1, body: DRAFT_1 }] },
    });

    view = await step(session, { type: 'user_rejected_artifact', artifactId: 'a3', reason: 'Scene 2 drags.' });
    expect(model.calls).toHaveLength(10); // waiting for notes: nobody ran
    expect(view).toMatchObject({
      waitingReason: 'revision',
      acceptedEvents: ['user_submitted_input'],
      pendingStep: { workerId: 'drafter', roleId: 'literary', revises: 'a3', revisionNotes: 'Scene 2 drags.' },
      artifact: { id: 'a3', status: 'rejected', tags: [{ tag: 'draft', version: 1, body: DRAFT_1 }] },
    });

    // ── The revision: notes and the previous version reach the drafter ──────────────────
    view = await step(session, { type: 'user_submitted_input', text: 'And name the keeper in the first line.' });
    const reviser = request(10, 'worker');
    expect(briefOf(reviser)).toContain('## Role: literary');
    expect(briefOf(reviser)).toContain(
      `## Revision\nThe user rejected your previous artifact a3. Their notes:\nScene 2 drags.\nAnd name the keeper in the first line.\n\nYour previous version:\n### draft (v1)\n${DRAFT_1}`,
    );
    expect(reviser.messages).toHaveLength(2); // a fresh conversation: skill prompt + brief
    expect(view).toMatchObject({
      waitingReason: 'review_artifact',
      artifact: {
        id: 'a4',
        workerId: 'drafter',
        roleId: 'literary',
        status: 'pending_review',
        revises: 'a3',
        tags: [{ tag: 'draft', version: 2, body: DRAFT_2 }],
        questions: [{ id: 'q1', text: 'Keep the open ending?' }], // they ride along with the review
      },
      questions: [{ id: 'q1', text: 'Keep the open ending?' }],
    });
    expect(view.artifacts).toEqual([
      { id: 'a1', workerId: 'brief-writer', status: 'accepted' },
      { id: 'a2', workerId: 'outliner', status: 'accepted' },
      { id: 'a3', workerId: 'drafter', status: 'superseded' },
      { id: 'a4', workerId: 'drafter', status: 'pending_review' },
    ]);
    // The rejected draft is still readable: nothing on the blackboard is overwritten (its
    // body left the context once superseded; the session's archive keeps it).
    const draft = session.actorRef.getSnapshot().context.blackboard.draft!;
    expect(draft.map((v) => ('body' in v ? [v.version, true] : [v.archived, false]))).toEqual([
      [1, false],
      [2, true],
    ]);
    expect((await session.tagVersions('draft')).map((v) => [v.version, v.artifactId, v.body])).toEqual([
      [1, 'a3', DRAFT_1],
      [2, 'a4', DRAFT_2],
    ]);

    // ── Accept dismisses the ride-along questions; the manager reads and finishes ───────
    view = await step(session, { type: 'user_accepted_artifact', artifactId: 'a4' });
    const afterDraft = request(11, 'manager');
    expect(lastOf(afterDraft)).toEqual({ role: 'user', content: 'The user accepted artifact a4 from drafter (draft v2). Plan the next step.' });
    expect(systemOf(afterDraft)).toContain('- a3 by drafter: superseded (draft v1) [role literary]');
    expect(systemOf(afterDraft)).toContain('- a4 by drafter: accepted (draft v2) [role literary, revises a3]');
    expect(everything(afterDraft)).not.toContain('On the second night the log wrote itself.'); // bodies only through read_blackboard
    expect(everything(request(12, 'manager'))).toContain(`## draft (v2, by drafter)\n${DRAFT_2}`);

    expect(view).toMatchObject({ phase: 'done', state: 'done', message: SUMMARY, acceptedEvents: [] });
    expect(view.waitingReason).toBeUndefined();
    expect(view.questions).toBeUndefined();
    expect(view.blackboard).toEqual([
      { tag: 'request', version: 2, writtenBy: 'user' },
      { tag: 'brief', version: 1, writtenBy: 'brief-writer' },
      { tag: 'outline', version: 1, writtenBy: 'outliner' },
      { tag: 'draft', version: 2, writtenBy: 'drafter' },
    ]);
    expect(view.artifacts.map((a) => `${a.id}:${a.status}`)).toEqual(['a1:accepted', 'a2:accepted', 'a3:superseded', 'a4:accepted']);
    expect(session.actorRef.getSnapshot().context.artifacts[3]!.questions).toBeUndefined();
    expect(view.rejections).toEqual([]);
    expect(view.rounds).toBe(13);
    model.assertComplete();
  });
});

describe('the manager prompt', () => {
  it('holds the blackboard index, not bodies: a long body appears only after read_blackboard', async () => {
    const firstLine = 'A ghost haunts the lighthouse at Skomvær, where the keeper has not slept for nine nights and counting.';
    const secret = 'The keeper is the ghost.';
    const note = [firstLine, ...Array.from({ length: 40 }, (_, i) => `Line ${i + 2} of the note.`), secret].join('\n');
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: false })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note } })] },
      { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['note'] }, 'read')] },
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Read it.' })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    await step(session, { type: 'user_submitted_input', text: 'A ghost story' });
    const view = await step(session, { type: 'user_accepted_artifact', artifactId: 'a1' });
    expect(view.phase).toBe('done');

    const beforeRead = model.calls[2]!;
    expect(systemOf(beforeRead)).toContain(`- note v1 (${note.length} chars, by echo): ${firstLine.slice(0, 79)}…`);
    expect(everything(beforeRead)).not.toContain(secret);
    expect(everything(beforeRead)).not.toContain(firstLine); // even the first line only as a cut

    const afterRead = model.calls[3]!;
    expect(systemOf(afterRead)).not.toContain(secret);
    expect(afterRead.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'read')).toEqual({
      role: 'tool',
      tool_call_id: 'read',
      content: `## note (v1, by echo)\n${note}`,
    });
    model.assertComplete();
  });
});
