/**
 * The live event stream: `session.subscribe()` and `session.stream()` on real sessions with
 * the strict ScriptedModel (and, for text deltas, OpenAIModel against the fake server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Model } from '../../src/index.js';
import { scriptedCall, ScriptedModel, type ScriptStep } from '../../src/testing.js';
import { OpenAIModel } from '../../src/models/openai-model.js';
import type { Session } from '../../src/runtime/session.js';
import { SessionStreamEventSchema, type SessionStreamEvent, type StreamEventOf } from '../../src/core/machines/stream-events.js';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

const request = { type: 'user_submitted_input', text: 'A note about tea' } as const;
const runEcho = (requiresApproval = false) => scriptedCall('run_worker', { workerId: 'echo', reason: 'restate it', requiresApproval });

async function tinySession(steps: ScriptStep[], maxBurst?: number): Promise<{ session: Session; model: ScriptedModel }> {
  const model = new ScriptedModel(steps);
  const session = await createRuntime({ model, ...(maxBurst ? { maxBurst } : {}) }).createSession({ packageId: 'tiny' });
  return { session, model };
}

/** Everything a stream yields, each event checked against the schema the inspector relies on. */
async function collect(stream: AsyncIterable<SessionStreamEvent>): Promise<SessionStreamEvent[]> {
  const events: SessionStreamEvent[] = [];
  for await (const event of stream) events.push(SessionStreamEventSchema.parse(event));
  return events;
}

const ofType = <T extends SessionStreamEvent['type']>(events: SessionStreamEvent[], type: T) => events.filter((e): e is StreamEventOf<T> => e.type === type);

/** A compact trace: type plus the one field that tells the events of a type apart. */
function trace(events: SessionStreamEvent[]): string[] {
  return events.map((e) => {
    switch (e.type) {
      case 'state_entered':
        return `state ${e.state}`;
      case 'round_started':
        return `start ${e.agent} ${e.burst}/${e.maxBurst}`;
      case 'round_finished':
        return `finish ${e.agent} ${e.outcome} [${e.toolCalls.join(',')}]`;
      case 'tool_call_checked':
        return `${e.accepted ? 'accept' : `refuse(${e.rule})`} ${e.tool}`;
      case 'artifact_published':
        return `artifact ${e.artifactId}`;
      case 'waiting':
        return `waiting ${e.reason}`;
      case 'decision':
        return `decision ${e.reason} ${e.eventType}`;
      case 'text_delta':
        return `text ${e.text}`;
      case 'artifact_delta':
        return `draft ${e.tag}: ${e.delta}`;
      default:
        return e.type;
    }
  });
}

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('session.stream()', () => {
  it('delivers a scripted run in order and ends at the wait', async () => {
    const { session, model } = await tinySession([
      {
        agent: 'manager',
        toolCalls: [scriptedCall('list_workers'), scriptedCall('no_such_tool'), scriptedCall('read_blackboard', { tags: 'request' }), runEcho()],
        usage: { promptTokens: 120, completionTokens: 30 },
      },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Tea, restated.' } })], usage: { promptTokens: 80, completionTokens: 20 } },
    ]);
    const stream = session.stream();
    const sent = session.send(request);
    const events = await collect(stream);
    expect((await sent).view.waitingReason).toBe('review_artifact');

    expect(trace(events)).toEqual([
      'decision intake user_submitted_input',
      'state running.manager.thinking',
      'start manager 1/12',
      'finish manager replied [list_workers,no_such_tool,read_blackboard,run_worker]',
      'state running.manager.checking',
      'accept list_workers',
      'refuse(actorMayUseTool) no_such_tool',
      'refuse(argumentsMatchSchema) read_blackboard',
      'accept run_worker',
      'state running.worker.thinking',
      'start worker 2/12',
      'finish worker replied [submit]',
      'state running.worker.checking',
      'accept submit',
      // The model did not stream: the whole body comes as one draft piece, before the artifact.
      'draft note: Tea, restated.',
      'artifact a1',
      'state waiting_user.review_artifact',
      'waiting review_artifact',
    ]);
    const [manager, worker] = ofType(events, 'round_finished');
    expect(manager).toMatchObject({
      agent: 'manager',
      workerId: null,
      round: 1,
      usage: { promptTokens: 120, completionTokens: 30 },
      totalUsage: { promptTokens: 120, completionTokens: 30 },
    });
    expect(worker).toMatchObject({
      agent: 'worker',
      workerId: 'echo',
      round: 2,
      usage: { promptTokens: 80, completionTokens: 20 },
      totalUsage: { promptTokens: 200, completionTokens: 50 },
    });
    expect(manager!.durationMs).toBeGreaterThanOrEqual(0);
    expect(ofType(events, 'artifact_published')[0]).toMatchObject({ artifactId: 'a1', workerId: 'echo', tags: { note: 1 }, revises: null });
    expect(events.every((e) => e.sessionId === session.id)).toBe(true);
    const times = events.map((e) => e.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(session.listenerCount).toBe(0);
    model.assertComplete();
  });

  it('gives each refused call its rule and the message the model was told', async () => {
    const { session, model } = await tinySession([
      {
        agent: 'manager',
        toolCalls: [
          scriptedCall('run_worker', { workerId: 'ghost', reason: 'x', requiresApproval: false }),
          scriptedCall('ask_user', { message: 'first' }),
          scriptedCall('finish', { summary: 'second' }),
        ],
      },
      { agent: 'manager', toolCalls: [runEcho()] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { summary: 'not mine' } }), scriptedCall('submit', { outputs: { note: 'mine' } })] },
    ]);
    const stream = session.stream();
    void session.send(request);
    const first = await collect(stream);
    const checked = ofType(first, 'tool_call_checked');
    expect(checked.map((c) => [c.tool, c.accepted, c.rule])).toEqual([
      ['run_worker', false, 'workerIsRegistered'],
      ['ask_user', true, undefined],
      ['finish', false, 'oneBoundaryPerReply'],
    ]);
    const told = session.actorRef.getSnapshot().context.transcripts.manager.messages.filter((m) => m.role === 'tool');
    for (const refused of checked.filter((c) => !c.accepted)) {
      const message = told.find((m) => m.tool_call_id === refused.callId)!.content;
      expect(`Error: ${refused.message}`).toBe(message);
    }

    const again = session.stream();
    void session.send({ type: 'user_submitted_input', text: 'Go on.' });
    const second = ofType(await collect(again), 'tool_call_checked');
    expect(second.map((c) => [c.agent, c.tool, c.accepted, c.rule ?? null])).toEqual([
      ['manager', 'run_worker', true, null],
      ['worker', 'submit', false, 'tagsWithinOutputTags'],
      ['worker', 'submit', true, null],
    ]);
    expect(second[1]!.message).toMatch(/summary/);
    model.assertComplete();
  });

  it('ends at done with the summary, and a stream of a finished session ends at once', async () => {
    const { session } = await tinySession([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Nothing to do.' })] }]);
    const stream = session.stream();
    void session.send(request);
    const events = await collect(stream);
    expect(trace(events).slice(-2)).toEqual(['state done', 'done']);
    expect(events.at(-1)).toMatchObject({ type: 'done', summary: 'Nothing to do.' });
    expect(await collect(session.stream())).toEqual([]);
    expect(session.listenerCount).toBe(0);
  });

  it('reports a failed model call as a failed round, then the notice and the wait', async () => {
    const { session } = await tinySession([{ agent: 'manager', error: new Error('server on fire') }]);
    const stream = session.stream();
    void session.send(request);
    const events = await collect(stream);
    expect(trace(events)).toEqual([
      'decision intake user_submitted_input',
      'state running.manager.thinking',
      'start manager 1/12',
      'finish manager failed []',
      'notice',
      'state waiting_user.input',
      'waiting input',
    ]);
    expect(ofType(events, 'round_finished')[0]).toMatchObject({ error: 'server on fire', usage: null });
    expect(ofType(events, 'notice')[0]!.text).toMatch(/The manager model failed: server on fire/);
  });

  it('reports a round cut short by stop() as stopped, and ends', async () => {
    const hanging: Model = { label: 'hangs', complete: () => new Promise(() => {}) };
    const session = await createRuntime({ model: hanging }).createSession({ packageId: 'tiny' });
    const stream = session.stream();
    const sent = session.send(request);
    setTimeout(() => session.stop(), 10);
    const events = await collect(stream);
    expect(trace(events)).toEqual([
      'decision intake user_submitted_input',
      'state running.manager.thinking',
      'start manager 1/12',
      'finish manager stopped []',
      'stopped',
    ]);
    expect((await sent).ok).toBe(false);
    expect(session.listenerCount).toBe(0);
  });

  it('reports a refused user event, and the session still waits', async () => {
    const { session } = await tinySession([]);
    const stream = session.stream();
    const result = await session.send({ type: 'user_approved_next_step' });
    expect(result.ok).toBe(false);
    const events = await collect(stream);
    expect(trace(events)).toEqual(['user_event_refused', 'waiting intake']);
    expect(events[0]).toMatchObject({ eventType: 'user_approved_next_step', reason: result.ok ? '' : result.error.message });
  });
});

describe('session.subscribe()', () => {
  it('sees exactly one round_finished per model call, and each tool call once, over a whole session', async () => {
    const { session, model } = await tinySession(
      [
        { agent: 'manager', toolCalls: [runEcho(true)] },
        { agent: 'worker', content: 'thinking…' },
        { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'n' } })] },
        { agent: 'manager', toolCalls: [scriptedCall('list_artifacts'), scriptedCall('read_blackboard', { tags: ['note'] })] },
        { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'done' })] },
      ],
      12,
    );
    const events: SessionStreamEvent[] = [];
    const off = session.subscribe((e) => events.push(e));
    await session.send(request);
    await session.send({ type: 'user_approved_next_step' });
    const review = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1' });
    expect(review.view.phase).toBe('done');
    off();

    expect(ofType(events, 'round_started')).toHaveLength(model.calls.length);
    expect(ofType(events, 'round_finished')).toHaveLength(model.calls.length);
    expect(ofType(events, 'round_finished').map((r) => r.round)).toEqual([1, 2, 3, 4, 5]);
    const context = session.actorRef.getSnapshot().context;
    const callIds = [...context.transcripts.manager.messages, ...context.transcripts.worker.messages].flatMap((m) =>
      m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [],
    );
    // The worker's messages of its run; the manager's whole conversation.
    expect(
      ofType(events, 'tool_call_checked')
        .map((c) => c.callId)
        .sort(),
    ).toEqual(callIds.sort());
    expect(ofType(events, 'waiting').map((w) => w.reason)).toEqual(['approve_step', 'review_artifact']);
    expect(events.at(-1)!.type).toBe('done');
    expect(session.listenerCount).toBe(0);
  });

  it('a worker turn skipped at the burst limit is no round: starts and finishes match the model calls', async () => {
    const { session, model } = await tinySession(
      [
        { agent: 'manager', toolCalls: [runEcho()] },
        { agent: 'worker', content: 'thinking…' },
        { agent: 'worker', content: 'still thinking…' },
      ],
      3,
    );
    const events = await (async () => {
      const stream = session.stream();
      void session.send(request);
      return collect(stream);
    })();
    expect(model.calls).toHaveLength(3);
    expect(trace(events).filter((t) => t.startsWith('start') || t.startsWith('finish'))).toEqual([
      'start manager 1/3',
      'finish manager replied [run_worker]',
      'start worker 2/3',
      'finish worker replied []',
      'start worker 3/3',
      'finish worker replied []',
    ]);
    expect(trace(events).slice(-3)).toEqual(['notice', 'state waiting_user.input', 'waiting input']);
    model.assertComplete();
  });

  it('calls the listener synchronously, inside send()', async () => {
    const { session } = await tinySession([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which tea?' })] }]);
    const seen: string[] = [];
    session.subscribe((e) => seen.push(e.type));
    const sent = session.send(request);
    // actor.send runs inside send(): the first events are already there before any await.
    expect(seen).toEqual(['decision', 'state_entered', 'round_started']);
    await sent;
    expect(seen.at(-1)).toBe('waiting');
  });

  it('reports a round already under way at subscribe time (a restored session) without a start', async () => {
    const hanging: Model = { label: 'hangs', complete: () => new Promise(() => {}) };
    const first = await createRuntime({ model: hanging }).createSession({ packageId: 'tiny' });
    void first.send(request);
    await new Promise((r) => setTimeout(r, 5));
    const persisted = first.persisted();
    first.stop();

    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Again?' })] }]);
    const restored = createRuntime({ model }).restoreSession(persisted);
    const events = await collect(restored.stream());
    expect(trace(events)).toEqual([
      'finish manager replied [ask_user]',
      'state running.manager.checking',
      'accept ask_user',
      'state waiting_user.intake',
      'waiting intake',
    ]);
  });
});

describe('text deltas', () => {
  async function openAISession(content: string, toolCall = scriptedCall('ask_user', { message: 'Which tea?' }), calls = 1) {
    const reply = {
      content,
      toolCalls: [{ name: toolCall.name, arguments: JSON.stringify(toolCall.arguments) }],
      usage: { promptTokens: 50, completionTokens: 12 },
      pieces: 4,
    };
    const server = await startFakeOpenAI(Array.from({ length: calls }, () => ({ reply })));
    servers.push(server);
    const model = new OpenAIModel({ apiKey: 'k', baseURL: server.baseURL, model: 'fake-model', timeoutMs: 2_000, maxRetries: 0 });
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    return { server, session };
  }

  it('streams the reply through OpenAIModel when a reader wants text, between the round start and finish', async () => {
    const content = 'Let me ask which tea you mean.';
    const { server, session } = await openAISession(content);
    const stream = session.stream();
    void session.send(request);
    const events = await collect(stream);
    expect(server.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const types = events.map((e) => e.type);
    const deltas = ofType(events, 'text_delta');
    expect(deltas.map((d) => d.text).join('')).toBe(content);
    expect(deltas.every((d) => d.agent === 'manager' && d.round === 1)).toBe(true);
    expect(types.indexOf('round_started')).toBeLessThan(types.indexOf('text_delta'));
    expect(types.lastIndexOf('text_delta')).toBeLessThan(types.indexOf('round_finished'));
    expect(ofType(events, 'round_finished')[0]!.usage).toEqual({ promptTokens: 50, completionTokens: 12 });
    expect(session.view().message).toBe('Which tea?');
    // The reader is gone: the next model call would not stream.
    expect(session.deltaSinks()).toBeUndefined();
  });

  it('a listener gets every piece; a stream read late holds them merged, one string per round', async () => {
    const { session } = await tinySession([
      (req) => {
        for (const piece of ['Which ', 'tea ', 'do you mean?']) req.onTextDelta?.(piece);
        return {
          content: 'Which tea do you mean?',
          toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ask_user', arguments: '{"message":"Which tea?"}' } }],
        };
      },
    ]);
    const pieces: string[] = [];
    const off = session.subscribe((e) => e.type === 'text_delta' && pieces.push(e.text));
    const late = session.stream();
    await session.send(request);
    off();
    expect(pieces).toEqual(['Which ', 'tea ', 'do you mean?']);
    expect(ofType(await collect(late), 'text_delta').map((d) => d.text)).toEqual(['Which tea do you mean?']);
  });

  it('does not stream for listeners that opt out of text', async () => {
    const { server, session } = await openAISession('Some text.');
    const events: SessionStreamEvent[] = [];
    const off = session.subscribe((e) => events.push(e), { textDeltas: false });
    await session.send(request);
    off();
    expect(server.requests[0]).not.toHaveProperty('stream');
    expect(ofType(events, 'text_delta')).toEqual([]);
    expect(ofType(events, 'round_finished')).toHaveLength(1);
  });

  it('asks a listener whose textDeltas is a function at each model call: a call streams only when it says yes', async () => {
    const { server, session } = await openAISession('Some text.', undefined, 2);
    let wanted = false;
    let asked = 0;
    const events: SessionStreamEvent[] = [];
    const off = session.subscribe((e) => events.push(e), {
      textDeltas: () => {
        asked += 1;
        return wanted;
      },
    });
    expect(session.deltaSinks()).toBeUndefined();
    wanted = true;
    expect(session.deltaSinks()).toMatchObject({ onTextDelta: expect.any(Function), onToolCallDelta: expect.any(Function) });
    wanted = false;
    asked = 0;
    await session.send(request);
    // Once per call: its text and its tool calls stream together or not at all.
    expect(asked).toBe(server.requests.length);
    expect(server.requests[0]).not.toHaveProperty('stream');
    expect(ofType(events, 'text_delta')).toEqual([]);
    wanted = true;
    await session.send({ type: 'user_submitted_input', text: 'Go on.' });
    off();
    expect(server.requests[1]).toHaveProperty('stream', true);
    expect(ofType(events, 'text_delta').length).toBeGreaterThan(0);
    // Unsubscribed, it is asked no more.
    asked = 0;
    expect(session.deltaSinks()).toBeUndefined();
    expect(asked).toBe(0);
  });

  it('a listener whose textDeltas function throws gets no deltas, and the session goes on', async () => {
    const { server, session } = await openAISession('Some text.');
    const thrown: unknown[] = [];
    const onUncaught = (error: unknown) => thrown.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const off = session.subscribe(() => {}, {
        textDeltas: () => {
          throw new Error('listener bug');
        },
      });
      const result = await session.send(request);
      off();
      expect(result.ok).toBe(true);
      expect(server.requests[0]).not.toHaveProperty('stream');
      await expect.poll(() => thrown.length).toBeGreaterThan(0);
      expect((thrown[0] as Error).message).toBe('listener bug');
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('memory', () => {
  it('streams nobody reads are released when the session waits', async () => {
    const { session } = await tinySession([
      { agent: 'manager', toolCalls: [runEcho()] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'n' } })] },
    ]);
    const streams = Array.from({ length: 500 }, () => session.stream());
    expect(session.listenerCount).toBe(500);
    await session.send(request);
    expect(session.listenerCount).toBe(0);
    expect(session.deltaSinks()).toBeUndefined();
    // Each kept its own run's events for a late reader; the session holds none of them.
    expect(trace(await collect(streams[0]!)).at(-1)).toBe('waiting review_artifact');
  });

  it('a reader that leaves early unsubscribes at once and drops its buffer', async () => {
    const { session } = await tinySession([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which tea?' })] }]);
    const stream = session.stream();
    const sent = session.send(request);
    for await (const event of stream) {
      expect(event.type).toBe('decision');
      break;
    }
    expect(session.listenerCount).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    await sent;
  });

  it('an unsubscribed listener hears nothing more, and nothing listens to the actor', async () => {
    const { session } = await tinySession([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which tea?' })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Green or black?' })] },
    ]);
    // Count the subscriptions the hub takes on the chart's emitted events, and their ends.
    const actor = session.actorRef;
    const on = actor.on.bind(actor);
    let taken = 0;
    let ended = 0;
    actor.on = ((type: Parameters<typeof on>[0], handler: Parameters<typeof on>[1]) => {
      const subscription = on(type, handler);
      taken++;
      return { unsubscribe: () => (ended++, subscription.unsubscribe()) };
    }) as typeof actor.on;
    const seen: string[] = [];
    const off = session.subscribe((e) => seen.push(e.type));
    await session.send(request);
    const count = seen.length;
    expect(taken).toBe(1);
    off();
    off(); // twice is harmless
    expect(session.listenerCount).toBe(0);
    expect(ended, 'the hub let go of the actor').toBe(1);
    await session.send({ type: 'user_submitted_input', text: 'Green.' });
    expect(seen).toHaveLength(count);
    expect(taken, 'nothing subscribed again').toBe(1);
  });
});
