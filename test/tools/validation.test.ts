/**
 * The seed's six validation rules, driven through real sessions: a refused tool call never
 * crashes anything, the model reads `Error: …` as the call's result in its next request, and
 * the round still counts toward the burst.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { ChatMessage, ModelRequest, Session } from '../../src/index.js';
import type { ScriptStep } from '../../src/testing.js';

type ScriptedCall = ReturnType<typeof scriptedCall>;

async function start(steps: ScriptStep[], options: { packageId?: string; maxBurst?: number } = {}) {
  const model = new ScriptedModel(steps);
  const runtime = createRuntime({ model });
  const session = await runtime.createSession({ packageId: options.packageId ?? 'tiny', ...(options.maxBurst ? { maxBurst: options.maxBurst } : {}) });
  return { model, session };
}

const input = (text: string) => ({ type: 'user_submitted_input', text }) as const;
const named = (c: ScriptedCall, id: string): ScriptedCall => ({ ...c, id });

/** The one tool result that answers call `id` in a request the model received. */
function resultOf(request: ModelRequest | undefined, id: string): string {
  const results = (request?.messages ?? []).filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool' && m.tool_call_id === id);
  expect(results, `tool results for ${id}`).toHaveLength(1);
  return results[0]!.content;
}

/** Every assistant tool call is followed, right away and in order, by exactly one result. */
function expectEveryCallAnswered(messages: readonly ChatMessage[]) {
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || !m.tool_calls?.length) return;
    const following = messages.slice(i + 1, i + 1 + m.tool_calls.length);
    expect(following.map((f) => (f.role === 'tool' ? f.tool_call_id : `(${f.role})`))).toEqual(m.tool_calls.map((c) => c.id));
  });
  const ids = messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
  expect(new Set(ids).size).toBe(ids.length);
}

const contextOf = (session: Session) => session.actorRef.getSnapshot().context;

const runEcho = (requiresApproval: boolean) => scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval });
const askToGoOn: ScriptStep = { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Shall I go on?' })] };

/**
 * The manager's first round makes the call under test (id "bad"); its second round asks the
 * user. Returns the result the model read for "bad" in its second request.
 */
async function managerTries(bad: ScriptedCall, packageId = 'tiny') {
  const { model, session } = await start([{ agent: 'manager', toolCalls: [named(bad, 'bad')] }, askToGoOn], { packageId });
  const sent = await session.send(input('A ghost story in a lighthouse'));
  expect(sent.ok).toBe(true);
  model.assertComplete();
  expectEveryCallAnswered(contextOf(session).transcripts.manager.messages);
  return { result: resultOf(model.calls[1], 'bad'), view: sent.view, model, session };
}

/** The manager runs echo; the worker's first round makes the call under test, its second submits. */
async function workerTries(bad: ScriptedCall) {
  const { model, session } = await start([
    { agent: 'manager', toolCalls: [runEcho(false)] },
    { agent: 'worker', toolCalls: [named(bad, 'bad')] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A ghost story, set in a lighthouse.' } })] },
  ]);
  const sent = await session.send(input('A ghost story in a lighthouse'));
  model.assertComplete();
  expectEveryCallAnswered(contextOf(session).transcripts.worker.messages);
  return { result: resultOf(model.calls[2], 'bad'), view: sent.view, model, session };
}

describe('rule 1: the actor may use the tool', () => {
  it('a manager that calls a loop tool gets its result and keeps its turn', async () => {
    const { model, session } = await start([{ agent: 'manager', toolCalls: [scriptedCall('list_workers', {}, 'lw')] }, askToGoOn]);
    const { view } = await session.send(input('A ghost story'));
    expect(resultOf(model.calls[1], 'lw')).toMatch(/^- echo: Restates the user's request as a short note\. \[reads: request; writes: note\]/);
    expect(view.waitingReason).toBe('intake');
    expect(view.burst).toBe(2);
    model.assertComplete();
  });

  it('a manager that calls the worker tool submit is told it is a worker tool', async () => {
    const { result, view } = await managerTries(scriptedCall('submit', { outputs: { note: 'I wrote it myself' } }));
    expect(result).toBe(
      'Error: "submit" is a worker tool; the manager may not call it. Tools available to the manager: ' +
        'read_blackboard, list_workers, list_artifacts, run_worker, ask_user, review_blackboard, finish.',
    );
    expect(view.blackboard.map((b) => b.tag)).toEqual(['request']); // nothing was written
    expect(view.burst).toBe(2); // the refused round counted
  });

  it.each(['accept', 'user_accepted_artifact'])('a manager that calls the user action %s is told only the user accepts', async (name) => {
    const { result, view } = await managerTries(scriptedCall(name, { artifactId: 'a1' }));
    expect(result).toMatch(
      new RegExp(
        `^Error: "${name}" is the user's action, not a tool: only the user approves, rejects or accepts\\. Tools available to the manager: read_blackboard`,
      ),
    );
    expect(view.burst).toBe(2);
  });

  it('a manager that calls a tool that does not exist gets the list of tools that do', async () => {
    const { result, view } = await managerTries(scriptedCall('write_story', { text: 'Once upon a time' }));
    expect(result).toBe(
      'Error: There is no tool named "write_story". Tools available to the manager: read_blackboard, ' +
        'list_workers, list_artifacts, run_worker, ask_user, review_blackboard, finish.',
    );
    expect(view.burst).toBe(2);
  });

  it('a worker that calls run_worker is told it is a manager tool, and may submit next', async () => {
    const { result, view } = await workerTries(scriptedCall('run_worker', { workerId: 'summarize', reason: 'help me', requiresApproval: false }));
    expect(result).toBe('Error: "run_worker" is a manager tool; the worker may not call it. Tools available to the worker: submit, ask_user.');
    expect(view.waitingReason).toBe('review_artifact');
    expect(view.artifact?.tags).toEqual([{ tag: 'note', version: 1, body: 'A ghost story, set in a lighthouse.', writtenBy: 'echo' }]);
    expect(view.burst).toBe(3); // one manager round + two worker rounds
  });

  it('a worker may call ask_user, which both actors have', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', toolCalls: [scriptedCall('ask_user', { questions: ['Which lighthouse?'] })] },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('worker_questions');
    expect(view.questions).toEqual([{ id: 'q1', text: 'Which lighthouse?' }]);
    model.assertComplete();
  });
});

describe('rule 2: the arguments match the tool schema', () => {
  it('a well-formed run_worker with approval waits for the user', async () => {
    const { model, session } = await start([{ agent: 'manager', toolCalls: [runEcho(true)] }]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('approve_step');
    expect(view.pendingStep).toEqual({ workerId: 'echo', reason: 'Restate the request.', requiresApproval: true, approval: 'model' });
    expect(view.burst).toBe(1);
    model.assertComplete();
  });

  it('a missing field is named', async () => {
    const { result, view } = await managerTries(scriptedCall('run_worker', { workerId: 'echo', requiresApproval: true }));
    expect(result).toBe(
      'Error: Invalid arguments for run_worker: reason: Invalid input: expected string, received undefined. Fix them and call run_worker again.',
    );
    expect(view.pendingStep).toBeUndefined();
    expect(view.burst).toBe(2);
  });

  it('a wrong type is named', async () => {
    const { result, view } = await managerTries(scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: 'yes' }));
    expect(result).toBe(
      'Error: Invalid arguments for run_worker: requiresApproval: Invalid input: expected boolean, received string. Fix them and call run_worker again.',
    );
    expect(view.burst).toBe(2);
  });

  it('an unknown key is refused (the schemas are strict)', async () => {
    const { result, view } = await managerTries(scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: true, priority: 'high' }));
    expect(result).toBe('Error: Invalid arguments for run_worker: (arguments): Unrecognized key: "priority". Fix them and call run_worker again.');
    expect(view.burst).toBe(2);
  });

  it('malformed JSON arguments are refused with the parser error', async () => {
    const { result, view } = await managerTries(scriptedCall('run_worker', '{"workerId": "echo",'));
    expect(result).toMatch(/^Error: The arguments of run_worker are not valid JSON \(.+\)\. Send a JSON object matching the tool's schema\.$/);
    expect(view.burst).toBe(2);
  });

  it('a worker submit without any output is refused, and the worker may submit again', async () => {
    const { result, view } = await workerTries(scriptedCall('submit', { outputs: {} }));
    expect(result).toBe('Error: Invalid arguments for submit: outputs: outputs must hold at least one tag. Fix them and call submit again.');
    expect(view.artifacts).toEqual([{ id: 'a1', workerId: 'echo', status: 'pending_review' }]);
  });
});

describe('rule 3: workerId is in the package registry', () => {
  it('an unknown workerId gets the list of workers', async () => {
    const { result, view } = await managerTries(scriptedCall('run_worker', { workerId: 'poet', reason: 'a poem', requiresApproval: true }));
    expect(result).toBe('Error: Unknown workerId "poet". Workers of this package: echo, summarize. Call list_workers for their tags.');
    expect(view.pendingStep).toBeUndefined();
    expect(view.burst).toBe(2);
  });

  it('an unknown roleId gets the roles of that worker', async () => {
    const { result } = await managerTries(
      scriptedCall('run_worker', { workerId: 'drafter', reason: 'write it', requiresApproval: true, roleId: 'comic' }),
      'short-story',
    );
    expect(result).toBe('Error: Worker "drafter" has no role "comic". Its roles: literary, genre; or leave roleId out.');
  });

  it('a roleId for a worker without roles is refused', async () => {
    const { result } = await managerTries(scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: true, roleId: 'literary' }));
    expect(result).toBe('Error: Worker "echo" declares no roles; leave roleId out.');
  });

  it('a registered worker with one of its roles is proposed as it is', async () => {
    const { model, session } = await start(
      [
        {
          agent: 'manager',
          toolCalls: [scriptedCall('run_worker', { workerId: 'drafter', reason: 'Write the story.', requiresApproval: true, roleId: 'genre' })],
        },
      ],
      { packageId: 'short-story' },
    );
    const { view } = await session.send(input('A ghost story'));
    expect(view.pendingStep).toEqual({ workerId: 'drafter', reason: 'Write the story.', requiresApproval: true, roleId: 'genre', approval: 'model' });
    model.assertComplete();
  });
});

describe('rule 4: submitted tags are within the worker outputTags', () => {
  it('a tag the worker does not declare is refused and nothing is written', async () => {
    const { result, view } = await workerTries(scriptedCall('submit', { outputs: { note: 'hi', summary: 'sneaky' } }));
    expect(result).toBe('Error: You may only write your declared output tags (note); not "summary". Submit again with only those tags.');
    // Only the second, valid submit reached the blackboard.
    expect(view.blackboard).toEqual([
      { tag: 'request', version: 1, writtenBy: 'user' },
      { tag: 'note', version: 1, writtenBy: 'echo' },
    ]);
    expect(view.artifact?.tags.map((t) => t.body)).toEqual(['A ghost story, set in a lighthouse.']);
    expect(view.burst).toBe(3);
  });

  it('a submit of exactly the declared tags becomes an artifact under review', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } }, 'ok')] },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('review_artifact');
    expect(view.artifact).toEqual({
      id: 'a1',
      workerId: 'echo',
      status: 'pending_review',
      tags: [{ tag: 'note', version: 1, body: 'A note.', writtenBy: 'echo' }],
    });
    expect(contextOf(session).transcripts.worker.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'ok',
      content: 'Submitted as artifact a1; the user reviews it.',
    });
    model.assertComplete();
  });
});

describe('rule 5: the manager does not pass inputTags / outputTags', () => {
  it('passing inputTags gets the specific message, not "unknown key"', async () => {
    const { result, view } = await managerTries(scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: true, inputTags: ['request'] }));
    expect(result).toBe(
      "Error: Do not pass inputTags to run_worker: the runtime reads a worker's tags from its skill. Call " +
        'run_worker again with only workerId, reason, requiresApproval and optionally roleId.',
    );
    expect(result).not.toMatch(/Unrecognized key/);
    expect(view.pendingStep).toBeUndefined();
    expect(view.burst).toBe(2);
  });

  it('passing both tag lists names both', async () => {
    const { result } = await managerTries(
      scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: true, inputTags: ['request'], outputTags: ['note'] }),
    );
    expect(result).toMatch(/^Error: Do not pass inputTags or outputTags to run_worker: the runtime reads a worker's tags from its skill\./);
  });

  it('a run_worker without tag lists takes the tags from the skill', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } })] },
    ]);
    await session.send(input('A ghost story in a lighthouse'));
    const brief = model.calls[1]!.messages[1]!.content;
    expect(brief).toContain('## Input "request" (v1)\nA ghost story in a lighthouse');
    expect(brief).toContain('## Output tags\nnote');
    model.assertComplete();
  });
});

describe('rule 6: the burst stays within maxBurst', () => {
  it('after maxBurst rounds of loop tools the session waits for the user with a notice, and a new input resets the burst', async () => {
    const listing: ScriptStep = { agent: 'manager', toolCalls: [scriptedCall('list_workers')] };
    const { model, session } = await start([listing, listing, listing], { maxBurst: 3 });

    const stopped = await session.send(input('A ghost story'));
    expect(stopped.ok).toBe(true);
    expect(stopped.view.state).toBe('waiting_user.input');
    expect(stopped.view.notice).toBe(
      'The agents used all 3 rounds allowed between two user actions (maxBurst) without reaching a point ' +
        'where you are needed. Nothing was lost: say how to continue, and the burst starts again from 0.',
    );
    expect(stopped.view.burst).toBe(3);
    expect(model.calls).toHaveLength(3); // the model was not called a fourth time
    model.assertComplete();

    // A hard user event resets the counter: three more rounds are allowed.
    model.push(
      { agent: 'manager', toolCalls: [scriptedCall('list_artifacts')] },
      { agent: 'manager', toolCalls: [scriptedCall('list_workers')] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which worker first?' })] },
    );
    const resumed = await session.send(input('Go on'));
    expect(model.calls[3]!.messages[0]!.content).toContain('Round 1 of at most 3');
    expect(resumed.view.state).toBe('waiting_user.intake'); // ask_user before the intake is confirmed
    expect(resumed.view.notice).toBeUndefined();
    expect(resumed.view.message).toBe('Which worker first?');
    expect(resumed.view.burst).toBe(3);
    expectEveryCallAnswered(contextOf(session).transcripts.manager.messages);
    model.assertComplete();
  });

  it('worker rounds count toward the same burst', async () => {
    const { model, session } = await start(
      [
        { agent: 'manager', toolCalls: [runEcho(false)] },
        { agent: 'worker', content: 'I will think about it.' },
      ],
      { maxBurst: 2 },
    );
    const { view } = await session.send(input('A ghost story'));
    expect(view.state).toBe('waiting_user.input');
    expect(view.notice).toMatch(/^The agents used all 2 rounds allowed between two user actions/);
    expect(model.calls).toHaveLength(2);
    model.assertComplete();
  });
});

describe('several tool calls in one reply', () => {
  it('loop tools run in order, one boundary runs, and a further boundary gets an error result', async () => {
    const { model, session } = await start([
      {
        agent: 'manager',
        toolCalls: [
          scriptedCall('list_workers', {}, 'workers'),
          scriptedCall('read_blackboard', { tags: ['request'] }, 'read'),
          named(runEcho(true), 'run'),
          scriptedCall('finish', { summary: 'All done' }, 'finish'),
          scriptedCall('ask_user', { message: 'Or should I ask?' }, 'ask'),
          scriptedCall('list_artifacts', {}, 'artifacts'),
        ],
      },
      askToGoOn,
    ]);
    const proposed = await session.send(input('A ghost story in a lighthouse'));
    expect(proposed.view.waitingReason).toBe('approve_step');
    expect(proposed.view.pendingStep?.workerId).toBe('echo');
    expect(proposed.view.burst).toBe(1); // one reply, one round

    await session.send({ type: 'user_rejected_next_step', reason: 'Not yet' });
    const next = model.calls[1]!;
    const results = next.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]);
    expect(results.map(([id]) => id)).toEqual(['workers', 'read', 'run', 'finish', 'ask', 'artifacts']);
    expect(resultOf(next, 'workers')).toContain('- echo:');
    expect(resultOf(next, 'read')).toBe('## request (v1, by user)\nA ghost story in a lighthouse');
    expect(resultOf(next, 'run')).toBe('Proposed to the user; you will hear whether they approved it.');
    expect(resultOf(next, 'finish')).toBe(
      'Error: Only one boundary tool runs per reply, and this reply already chose one. Call finish again in a later turn if it is still needed.',
    );
    expect(resultOf(next, 'ask')).toBe(
      'Error: Only one boundary tool runs per reply, and this reply already chose one. Call ask_user again in a later turn if it is still needed.',
    );
    expect(resultOf(next, 'artifacts')).toBe('No artifacts yet.');
    expectEveryCallAnswered(next.messages);
    model.assertComplete();
  });

  it('a worker that submits twice in one reply keeps the first submit', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      {
        agent: 'worker',
        toolCalls: [scriptedCall('submit', { outputs: { note: 'first' } }, 's1'), scriptedCall('submit', { outputs: { note: 'second' } }, 's2')],
      },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.artifact?.tags).toEqual([{ tag: 'note', version: 1, body: 'first', writtenBy: 'echo' }]);
    const messages = contextOf(session).transcripts.worker.messages;
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'Submitted as artifact a1; the user reviews it.',
      'Error: Only one submit call runs per reply, and this reply already chose one. Call submit again in a later turn if it is still needed.',
    ]);
    expectEveryCallAnswered(messages);
    model.assertComplete();
  });

  it('every call of a long mixed burst gets exactly one result, refused ones included', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [scriptedCall('list_workers'), scriptedCall('write_story'), scriptedCall('run_worker', '{oops')] },
      {
        agent: 'manager',
        toolCalls: [
          scriptedCall('read_blackboard', { tags: ['request', 'missing'] }),
          scriptedCall('run_worker', { workerId: 'echo', reason: 'x', requiresApproval: true, inputTags: [] }),
        ],
      },
      { agent: 'manager', toolCalls: [runEcho(false), scriptedCall('review_blackboard', {})] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'n', other: 'o' } }), scriptedCall('ask_user', { questions: [] })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'n' } }), scriptedCall('ask_user', { questions: ['Longer?'] })] },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('review_artifact');
    expect(view.artifact?.questions).toEqual([{ id: 'q1', text: 'Longer?' }]);
    expect(view.burst).toBe(5);
    const {
      manager: { messages: managerMessages },
      worker: { messages: workerMessages },
    } = contextOf(session).transcripts;
    expectEveryCallAnswered(managerMessages);
    expectEveryCallAnswered(workerMessages);
    expect(managerMessages.filter((m) => m.role === 'tool')).toHaveLength(7);
    expect(workerMessages.filter((m) => m.role === 'tool')).toHaveLength(4);
    model.assertComplete();
  });
});

describe('legacy JSON fallbacks', () => {
  it('a manager one-shot JSON decision runs as the tool it names', async () => {
    const decision = { tool: 'run_worker', arguments: { workerId: 'echo', reason: 'Restate it.', requiresApproval: true } };
    const { model, session } = await start([{ agent: 'manager', content: JSON.stringify(decision) }]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('approve_step');
    expect(view.pendingStep).toEqual({ workerId: 'echo', reason: 'Restate it.', requiresApproval: true, approval: 'model' });
    // The transcript holds a synthetic call with its result, so it stays valid for the API.
    const messages = contextOf(session).transcripts.manager.messages;
    expect(messages.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'fallback_1_0', function: { name: 'run_worker' } }] });
    expect(messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'fallback_1_0', content: 'Proposed to the user; you will hear whether they approved it.' });
    model.assertComplete();
  });

  it('a legacy decision is validated like any call', async () => {
    const { model, session } = await start([
      { agent: 'manager', content: '```json\n{"tool": "run_worker", "arguments": {"workerId": "poet", "reason": "x", "requiresApproval": true}}\n```' },
      askToGoOn,
    ]);
    await session.send(input('A ghost story'));
    expect(resultOf(model.calls[1], 'fallback_1_0')).toMatch(/^Error: Unknown workerId "poet"/);
    model.assertComplete();
  });

  it('a worker Phase A reply with outputs and askUser becomes an artifact with ride-along questions', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', content: JSON.stringify({ outputs: { note: 'A lighthouse ghost.' }, askUser: ['Should it rhyme?'] }) },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('review_artifact');
    expect(view.artifact).toMatchObject({
      id: 'a1',
      tags: [{ tag: 'note', version: 1, body: 'A lighthouse ghost.' }],
      questions: [{ id: 'q1', text: 'Should it rhyme?' }],
    });
    expectEveryCallAnswered(contextOf(session).transcripts.worker.messages);
    model.assertComplete();
  });

  it('a worker Phase A reply with only askUser asks before producing anything', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', content: '{"askUser": ["Which lighthouse?", "Which century?"]}' },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('worker_questions');
    expect(view.questions).toEqual([
      { id: 'q1', text: 'Which lighthouse?' },
      { id: 'q2', text: 'Which century?' },
    ]);
    expect(view.artifacts).toEqual([]);
    model.assertComplete();
  });

  it('a worker Phase A reply with an empty askUser list is a plain submit', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', content: '{"outputs": {"note": "Done."}, "askUser": []}' },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(view.waitingReason).toBe('review_artifact');
    expect(view.artifact?.questions).toBeUndefined();
    expect(
      contextOf(session)
        .transcripts.worker.messages.filter((m) => m.role === 'tool')
        .map((m) => m.content),
    ).toEqual(['Submitted as artifact a1; the user reviews it.']);
    model.assertComplete();
  });
});

describe('plain text and failures', () => {
  it('plain manager text is shown to the user as ask_user', async () => {
    const { model, session } = await start([
      { agent: 'manager', content: 'Which era should the story be set in?' },
      { agent: 'manager', content: '  Noted. Anything else before I start?  ' },
    ]);
    const clarifying = await session.send(input('A ghost story'));
    expect(clarifying.view.waitingReason).toBe('intake'); // intake is not confirmed yet
    expect(clarifying.view.message).toBe('Which era should the story be set in?');

    const confirmed = await session.send({ type: 'user_confirmed_intake' });
    expect(confirmed.view.waitingReason).toBe('input');
    expect(confirmed.view.message).toBe('Noted. Anything else before I start?');
    expectEveryCallAnswered(contextOf(session).transcripts.manager.messages);
    model.assertComplete();
  });

  it('a worker that only talks is nudged to call a tool, and the round counts', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(false)] },
      { agent: 'worker', content: 'Here is a note: a ghost.' },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A ghost.' } })] },
    ]);
    const { view } = await session.send(input('A ghost story'));
    expect(model.calls[2]!.messages.at(-1)).toEqual({
      role: 'user',
      content: 'Reply by calling submit with your outputs, or ask_user if you cannot go on without answers.',
    });
    expect(view.waitingReason).toBe('review_artifact');
    expect(view.burst).toBe(3);
    model.assertComplete();
  });

  it('a manager model that throws lands in input with the error shown, and the next input retries', async () => {
    const { model, session } = await start([
      { agent: 'manager', error: new Error('connect ECONNRESET 10.0.0.1:443') },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Back again: which era?' })] },
    ]);
    const failed = await session.send(input('A ghost story'));
    expect(failed.ok).toBe(true); // a model failure is a state, not an exception
    expect(failed.view.state).toBe('waiting_user.input');
    expect(failed.view.notice).toBe('The manager model failed: connect ECONNRESET 10.0.0.1:443 Nothing was lost; your next input tries again.');
    expect(failed.view.blackboard).toEqual([{ tag: 'request', version: 1, writtenBy: 'user' }]);
    expect(model.calls).toHaveLength(1);

    const retried = await session.send(input('Try again please'));
    expect(retried.view.notice).toBeUndefined();
    expect(retried.view.message).toBe('Back again: which era?');
    const userTurns = model.calls[1]!.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(userTurns).toEqual(['A ghost story', 'Try again please']);
    model.assertComplete();
  });

  it('a worker model that throws lands in input with the error shown', async () => {
    const { model, session } = await start([
      { agent: 'manager', toolCalls: [runEcho(true)] },
      { agent: 'worker', error: new Error('429 rate limited') },
      { agent: 'manager', toolCalls: [named(runEcho(false), 'again')] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } })] },
    ]);
    await session.send(input('A ghost story'));
    const failed = await session.send({ type: 'user_approved_next_step' });
    expect(failed.view.state).toBe('waiting_user.input');
    expect(failed.view.notice).toBe('The worker model failed: 429 rate limited Nothing was lost; your next input tries again.');

    const retried = await session.send(input('Run it again'));
    expect(retried.view.waitingReason).toBe('review_artifact');
    expect(retried.view.artifacts).toEqual([{ id: 'a1', workerId: 'echo', status: 'pending_review' }]);
    model.assertComplete();
  });
});
