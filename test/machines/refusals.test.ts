/**
 * Every user event that a waiting state does not accept is refused with a reason that names
 * the event and what is accepted now, and changes nothing but the bounded `rejections` log.
 */
import { describe, expect, it } from 'vitest';
import { fromPromise } from 'xstate';
import { createRuntime, userEventTypes } from '../../src/index.js';
import { sessionMachine, type TurnOutput } from '../../src/machine.js';
import { scriptedCall, ScriptedModel, testingPackage, workerReplies } from '../../src/testing.js';
import type { Session, SessionContext, UserEvent, UserEventType, WaitingReason } from '../../src/index.js';
import type { ScriptStep } from '../../src/testing.js';
import type { ToolCallInput, ToolCallOutput } from '../../src/core/tools/server-tools.js';

/** One valid payload per event: refusals here are about the state, never the payload. */
const validEvent: Record<UserEventType, UserEvent> = {
  user_selected_package: { type: 'user_selected_package', packageId: 'tiny' },
  user_submitted_input: { type: 'user_submitted_input', text: 'A ghost story in a lighthouse' },
  user_confirmed_intake: { type: 'user_confirmed_intake' },
  user_approved_next_step: { type: 'user_approved_next_step' },
  user_rejected_next_step: { type: 'user_rejected_next_step', reason: 'Not now' },
  user_accepted_artifact: { type: 'user_accepted_artifact', artifactId: 'a1' },
  user_rejected_artifact: { type: 'user_rejected_artifact', artifactId: 'a1', reason: 'Too short' },
  user_answered_questions: { type: 'user_answered_questions', answers: { q1: 'The one at Tromsø' } },
  user_skipped_questions: { type: 'user_skipped_questions' },
  user_approved_tool_call: { type: 'user_approved_tool_call', callId: 'call_t2' },
  user_rejected_tool_call: { type: 'user_rejected_tool_call', callId: 'call_t2', reason: 'Not that file' },
  user_answered_tool_input: { type: 'user_answered_tool_input', callId: 'call_t2', responses: { confirm: { action: 'decline' } } },
  user_gave_tool_result: { type: 'user_gave_tool_result', callId: 'call_t2', result: 'It was written.' },
};

/** What each waiting state declares, in the machine's order. */
const declared: Record<WaitingReason, UserEventType[]> = {
  skill_selection: ['user_selected_package'],
  intake: ['user_submitted_input', 'user_confirmed_intake', 'user_answered_questions', 'user_skipped_questions'],
  input: ['user_submitted_input', 'user_answered_questions', 'user_skipped_questions'],
  approve_step: ['user_approved_next_step', 'user_rejected_next_step'],
  review_artifact: ['user_accepted_artifact', 'user_rejected_artifact'],
  worker_questions: ['user_answered_questions', 'user_skipped_questions'],
  revision: ['user_submitted_input'],
  approve_tool: ['user_approved_tool_call', 'user_rejected_tool_call'],
  tool_input: ['user_answered_tool_input'],
  tool_interrupted: ['user_approved_tool_call', 'user_rejected_tool_call', 'user_gave_tool_result'],
};

const request = validEvent.user_submitted_input;
const runEcho = (requiresApproval: boolean) => scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval });

/** `packageId: null` opens the legacy path through skill_selection; `workerTurn`: a worker turn of the test's own. */
async function open(
  steps: ScriptStep[],
  packageId: string | null = 'tiny',
  workerTurn?: () => TurnOutput,
  toolCall?: (input: ToolCallInput) => ToolCallOutput,
) {
  const model = new ScriptedModel(steps);
  const machine = workerTurn
    ? sessionMachine.provide({
        actors: {
          workerTurn: fromPromise(async () => workerTurn()),
          ...(toolCall ? { toolCall: fromPromise<ToolCallOutput, ToolCallInput>(async ({ input }) => toolCall(input)) } : {}),
        },
      })
    : undefined;
  const runtime = createRuntime({ model, ...(machine ? { machine } : {}) });
  const session = await runtime.createSession(packageId ? { packageId } : {});
  return { model, session, runtime };
}

async function sendOk(session: Session, event: UserEvent) {
  const result = await session.send(event);
  expect(result.ok, JSON.stringify(result.ok ? result.view.state : result.error)).toBe(true);
  return result.view;
}

/** A short script to each waiting state. */
const reach: Record<WaitingReason, () => Promise<{ model: ScriptedModel; session: Session }>> = {
  skill_selection: () => open([], null),
  intake: () => open([]),
  async input() {
    const opened = await open([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'A lighthouse ghost: shall I start?' })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Anything to add before the first step?' })] },
    ]);
    await sendOk(opened.session, request);
    await sendOk(opened.session, { type: 'user_confirmed_intake' });
    return opened;
  },
  async approve_step() {
    const opened = await open([{ agent: 'manager', toolCalls: [runEcho(true)] }]);
    await sendOk(opened.session, request);
    return opened;
  },
  async review_artifact() {
    const opened = await open([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A ghost haunts a lighthouse.' } })] },
    ]);
    await sendOk(opened.session, request);
    return opened;
  },
  async worker_questions() {
    const opened = await open([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', toolCalls: [scriptedCall('ask_user', { questions: ['Which lighthouse?'] })] },
    ]);
    await sendOk(opened.session, request);
    return opened;
  },
  async approve_tool() {
    // The worker's turn calls an MCP tool that writes (the catalogue's reply, with its pins and verdict): it waits for a person.
    const opened = await open([{ agent: 'manager', toolCalls: [runEcho(false)] }], 'tiny', () => workerReplies(testingPackage, 'noter').tool_write!);
    await sendOk(opened.session, request);
    return opened;
  },
  // The approved call's server asks for input (a form) / the process running the call stopped: the call waits for a person.
  async tool_input() {
    const asks = ({ item }: ToolCallInput): ToolCallOutput => ({
      callId: item.callId,
      outcome: 'input_required',
      requests: [{ key: 'confirm', mode: 'form', message: 'Overwrite?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }],
    });
    const opened = await open([{ agent: 'manager', toolCalls: [runEcho(false)] }], 'tiny', () => workerReplies(testingPackage, 'noter').tool_write!, asks);
    await sendOk(opened.session, request);
    await sendOk(opened.session, { type: 'user_approved_tool_call', callId: 'call_t2' });
    return opened;
  },
  async tool_interrupted() {
    const cutOff = ({ item }: ToolCallInput): ToolCallOutput => ({ callId: item.callId, outcome: 'interrupted' });
    const opened = await open([{ agent: 'manager', toolCalls: [runEcho(false)] }], 'tiny', () => workerReplies(testingPackage, 'noter').tool_write!, cutOff);
    await sendOk(opened.session, request);
    await sendOk(opened.session, { type: 'user_approved_tool_call', callId: 'call_t2' });
    return opened;
  },
  async revision() {
    const opened = await reach.review_artifact();
    await sendOk(opened.session, { type: 'user_rejected_artifact', artifactId: 'a1', reason: 'Too flat' });
    return opened;
  },
};

function withoutRejections(context: SessionContext): Omit<SessionContext, 'rejections'> {
  const { rejections: _ignored, ...rest } = context;
  return rest;
}

/** Sends `event`, expects the refusal `message`, and checks that only the rejections log moved. */
async function expectRefused(session: Session, event: UserEvent, message: string) {
  const before = session.actorRef.getSnapshot();
  const result = await session.send(event);
  const after = session.actorRef.getSnapshot();

  expect(result).toMatchObject({ ok: false, error: { code: 'event_refused', message } });
  expect(after.value).toEqual(before.value);
  expect(withoutRejections(after.context)).toEqual(withoutRejections(before.context));
  expect(after.context.rejections).toEqual([
    ...before.context.rejections,
    { type: event.type, state: result.view.state, reason: message, at: expect.any(String) },
  ]);
  expect(result.view.rejections.at(-1)?.reason).toBe(message);
}

describe.each(Object.keys(declared) as WaitingReason[])('in waiting_user.%s', (reason) => {
  const accepted = declared[reason];
  const refused = userEventTypes.filter((type) => !accepted.includes(type));

  it(`the view lists exactly ${accepted.join(', ')} as accepted`, async () => {
    const { model, session } = await reach[reason]();
    expect(session.view()).toMatchObject({ state: `waiting_user.${reason}`, waitingReason: reason, acceptedEvents: accepted });
    model.assertComplete();
  });

  it.each(refused)('%s is refused, naming what is accepted now, and changes nothing', async (type) => {
    const { model, session } = await reach[reason]();
    const calls = model.calls.length;
    await expectRefused(session, validEvent[type], `"${type}" is not accepted while the session waits in ${reason}. Accepted now: ${accepted.join(', ')}.`);
    expect(model.calls).toHaveLength(calls); // no agent ran
    model.assertComplete();
  });
});

describe('guards that refuse an event the state declares', () => {
  it('confirming the intake before any request is refused', async () => {
    const { model, session } = await reach.intake();
    await expectRefused(session, { type: 'user_confirmed_intake' }, 'There is no request to confirm yet: send user_submitted_input with your request first.');
    model.assertComplete();
  });

  it.each([
    { type: 'user_accepted_artifact', artifactId: 'a9' },
    { type: 'user_rejected_artifact', artifactId: 'a9', reason: 'meh' },
  ] as const)('$type with a wrong artifactId names the artifact under review', async (event) => {
    const { model, session } = await reach.review_artifact();
    await expectRefused(session, event, 'Artifact "a9" is not the one under review; the artifact under review is "a1".');
    model.assertComplete();
  });

  it('accepting the rejected version after a revision names the new one under review', async () => {
    const { model, session } = await reach.revision();
    model.push({ agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A ghost haunts a lighthouse keeper.' } })] });
    const view = await sendOk(session, { type: 'user_submitted_input', text: 'Give the ghost a victim' });
    expect(view.artifacts).toEqual([
      { id: 'a1', workerId: 'echo', status: 'superseded' },
      { id: 'a2', workerId: 'echo', status: 'pending_review' },
    ]);
    await expectRefused(
      session,
      { type: 'user_accepted_artifact', artifactId: 'a1' },
      'Artifact "a1" is not the one under review; the artifact under review is "a2".',
    );
    model.assertComplete();
  });

  it.each([
    ['user_answered_questions', 'input'],
    ['user_skipped_questions', 'input'],
    ['user_answered_questions', 'intake'],
    ['user_skipped_questions', 'intake'],
  ] as const)('%s in %s without a question card is refused', async (type, where) => {
    const { model, session } = await reach[where]();
    expect(session.view().questions).toBeUndefined();
    await expectRefused(session, validEvent[type], 'There is no question card to answer: send user_submitted_input instead.');
    model.assertComplete();
  });

  it('answering a clarification card in intake adds the answers to the request', async () => {
    const { model, session } = await open([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Before I start:', questions: ['Which century?'] })] },
      { agent: 'manager', toolCalls: [runEcho(true)] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } })] },
    ]);
    const card = await sendOk(session, request);
    expect(card).toMatchObject({ waitingReason: 'intake', questions: [{ id: 'q1', text: 'Which century?' }] });
    const step = await sendOk(session, { type: 'user_answered_questions', answers: { q1: 'The 1890s' } });
    expect(step.waitingReason).toBe('approve_step');
    // The answer is a new part of the request holding only what is new (storage stays
    // linear); the earlier part left the context for the archive.
    const context = session.actorRef.getSnapshot().context;
    expect(context.blackboard.request?.map((v) => ('body' in v ? v.body : null))).toEqual([
      null,
      'Answers to the clarifying questions:\n- Which century?\n  → The 1890s',
    ]);
    expect((await session.tagVersions('request')).map((v) => v.body)).toEqual([
      'A ghost story in a lighthouse',
      'Answers to the clarifying questions:\n- Which century?\n  → The 1890s',
    ]);
    // The worker still reads the whole request: its turn fetches the archived part.
    expect((await sendOk(session, { type: 'user_approved_next_step' })).waitingReason).toBe('review_artifact');
    expect(model.calls[2]!.messages[1]!.content).toContain(
      '## Input "request" (v2)\nA ghost story in a lighthouse\n\nAnswers to the clarifying questions:\n- Which century?\n  → The 1890s',
    );
    model.assertComplete();
  });

  it('answering a question card in input is accepted', async () => {
    const { model, session } = await open([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Shall I start?' })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { assessment: 'A promising seed.', questions: ['Which century?'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
    ]);
    await sendOk(session, request);
    const card = await sendOk(session, { type: 'user_confirmed_intake' });
    expect(card).toMatchObject({ waitingReason: 'input', assessment: 'A promising seed.', questions: [{ id: 'q1', text: 'Which century?' }] });
    const done = await sendOk(session, { type: 'user_answered_questions', answers: { q1: 'The 1890s' } });
    expect(done.phase).toBe('done');
    expect(model.calls[2]!.messages.at(-1)).toEqual({ role: 'user', content: 'The user answered your questions:\n- Which century?\n  → The 1890s' });
    model.assertComplete();
  });

  it('an unknown package in skill_selection is refused with the list of packages; a known one opens the intake', async () => {
    const { model, session, runtime } = await open([], null);
    const packages = [...runtime.packages.keys()];
    expect(packages).toEqual(expect.arrayContaining(['short-story', 'tiny']));
    await expectRefused(session, { type: 'user_selected_package', packageId: 'poetry' }, `Unknown package "poetry". Packages: ${packages.join(', ')}.`);

    const view = await sendOk(session, { type: 'user_selected_package', packageId: 'short-story' });
    expect(view).toMatchObject({ waitingReason: 'intake', packageId: 'short-story' });
    expect(view.rejections).toHaveLength(1); // the log keeps the earlier refusal
    model.assertComplete();
  });
});

describe('invalid payloads', () => {
  it.each([
    ['an empty text', { type: 'user_submitted_input', text: '   ' }],
    ['a missing artifactId', { type: 'user_accepted_artifact' }],
    ['a non-string answer', { type: 'user_answered_questions', answers: { q1: 3 } }],
    ['an unknown key', { type: 'user_confirmed_intake', force: true }],
    ['an unknown event type', { type: 'user_danced' }],
    ['no event object at all', 'approve'],
  ])('%s is an invalid_event that the machine never sees', async (_label, event) => {
    const { model, session } = await reach.review_artifact();
    const before = session.actorRef.getSnapshot();
    const result = await session.send(event as UserEvent); // as a JS caller could send it
    expect(result.ok).toBe(false);
    expect(result.ok ? undefined : result.error.code).toBe('invalid_event');
    expect(result.ok ? '' : result.error.message).toMatch(/^Invalid event: .+\. Events look like \{ type: "user_submitted_input", text: "…" \}\.$/);
    expect(session.actorRef.getSnapshot().context).toBe(before.context); // not even a rejection entry
    model.assertComplete();
  });
});

describe('after done', () => {
  it.each(userEventTypes)('%s is refused because the session is done', async (type) => {
    const { model, session } = await open([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Nothing to do.' })] }]);
    const done = await sendOk(session, request);
    expect(done).toMatchObject({ phase: 'done', state: 'done', message: 'Nothing to do.', acceptedEvents: [] });
    const before = session.actorRef.getSnapshot();
    const result = await session.send(validEvent[type]);
    expect(result).toMatchObject({ ok: false, error: { code: 'event_refused', message: `"${type}" is not accepted because the session is done.` } });
    expect(session.actorRef.getSnapshot()).toBe(before);
    model.assertComplete();
  });
});

describe('while the agents are working', () => {
  it('an event sent to the running machine is refused and logged, and the run goes on', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { model, session } = await open([
      async () => {
        await gate;
        return { content: null, toolCalls: [{ id: 'ask', type: 'function', function: { name: 'ask_user', arguments: '{"message":"Ready?"}' } }] };
      },
    ]);
    const pending = session.send(request);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(session.view().state).toBe('running.manager.thinking');

    session.actorRef.send({ type: 'user_approved_next_step' });
    expect(session.view().rejections.at(-1)).toMatchObject({
      type: 'user_approved_next_step',
      state: 'running.manager.thinking',
      reason: '"user_approved_next_step" is not accepted while the agents are working (wait until the session waits for you).',
    });

    release();
    const result = await pending;
    expect(result).toMatchObject({ ok: true, view: { waitingReason: 'intake', message: 'Ready?' } });
    model.assertComplete();
  });
});

describe('a refusal carries structured fields besides the message', () => {
  it('send() returns eventType, state, accepted and enabled, read from the chart', async () => {
    const { model, session } = await reach.intake();
    const result = await session.send({ type: 'user_answered_questions', answers: { q1: 'x' } });
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: 'event_refused',
        message: 'There is no question card to answer: send user_submitted_input instead.',
        eventType: 'user_answered_questions',
        state: 'waiting_user.intake',
        accepted: declared.intake,
        enabled: ['user_submitted_input'],
      },
    });
    model.assertComplete();
  });

  it('EventRefusedError carries the same fields', async () => {
    const { EventRefusedError } = await import('../../src/core/errors.js');
    const error = new EventRefusedError('no', {
      eventType: 'user_confirmed_intake',
      state: 'waiting_user.input',
      accepted: ['user_submitted_input'],
      enabled: ['user_submitted_input'],
    });
    expect(error).toMatchObject({
      code: 'event_refused',
      message: 'no',
      eventType: 'user_confirmed_intake',
      state: 'waiting_user.input',
      accepted: ['user_submitted_input'],
      enabled: ['user_submitted_input'],
    });
  });
});
