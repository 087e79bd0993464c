/**
 * Drafts that stream as they are written: a worker's `submit` in flight becomes
 * `artifact_delta` events per tag, which join to exactly the body the blackboard then holds —
 * with the real `openai` client against the local streaming server (arguments in chunks of
 * 1–5 characters, so escapes are split between chunks), and with the scripted model for the
 * drafts a rule refuses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Model } from '../../src/index.js';
import { DemoModel, scriptedCall, ScriptedModel, type ScriptStep } from '../../src/testing.js';
import { OpenAIModel } from '../../src/models/openai-model.js';
import type { Session } from '../../src/runtime/session.js';
import { SessionStreamEventSchema, type SessionStreamEvent, type StreamEventOf } from '../../src/core/machines/stream-events.js';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';

const request = { type: 'user_submitted_input', text: 'A note about tea' } as const;
const runEcho = { name: 'run_worker', arguments: JSON.stringify({ workerId: 'echo', reason: 'restate it', requiresApproval: false }) };

/** Written by hand, so the escapes are there to be split: \n, \", \u00e9, a surrogate pair as two \u escapes, \\ and \/. */
const SUBMIT_ARGS = '{"outputs": {"note": "# Tea\\n\\nShe said \\"caf\\u00e9\\" \\ud83d\\ude00 twice.\\nA\\\\B\\/C\\tD"}}';
const BODY = '# Tea\n\nShe said "café" 😀 twice.\nA\\B/C\tD';

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function sessionWith(model: Model): Promise<Session> {
  return createRuntime({ model }).createSession({ packageId: 'tiny' });
}

/** Every event until the session waits, each checked against the schema. */
async function run(session: Session): Promise<SessionStreamEvent[]> {
  const events: SessionStreamEvent[] = [];
  const off = session.subscribe((event) => events.push(SessionStreamEventSchema.parse(event)));
  await session.send(request);
  off();
  return events;
}

const ofType = <T extends SessionStreamEvent['type']>(events: SessionStreamEvent[], type: T) => events.filter((e): e is StreamEventOf<T> => e.type === type);

/** The draft of each (round, tag) as a listener builds it: deltas appended, a discard empties the round. */
function drafts(events: SessionStreamEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'artifact_delta') out.set(`${e.round}:${e.tag}`, (out.get(`${e.round}:${e.tag}`) ?? '') + e.delta);
    if (e.type === 'artifact_draft_discarded') for (const key of [...out.keys()]) if (key.startsWith(`${e.round}:`)) out.delete(key);
  }
  return out;
}

function noteBody(session: Session): string | undefined {
  return session.view().artifact?.tags.find((t) => t.tag === 'note')?.body;
}

describe('artifact deltas over the real openai client', () => {
  it.each([1, 2, 3, 5])('arguments streamed %i characters at a time join to exactly the published body', async (chars) => {
    const server = await startFakeOpenAI([
      { reply: { toolCalls: [runEcho] } },
      { reply: { content: 'Writing it.', toolCalls: [{ name: 'submit', arguments: SUBMIT_ARGS, id: 'call_w' }], argumentPieceChars: chars } },
    ]);
    servers.push(server);
    const session = await sessionWith(new OpenAIModel({ apiKey: 'k', baseURL: server.baseURL, model: 'fake-model', timeoutMs: 2_000, maxRetries: 0 }));
    const events = await run(session);

    expect(server.requests[1]).toMatchObject({ stream: true });
    expect(noteBody(session)).toBe(BODY);
    const deltas = ofType(events, 'artifact_delta');
    expect(deltas.every((d) => d.round === 2 && d.worker === 'echo' && d.tag === 'note')).toBe(true);
    expect(deltas.map((d) => d.delta).join('')).toBe(BODY);
    // It streamed: many pieces, all before the round ended (none left for the publish to add).
    expect(deltas.length).toBeGreaterThan(5);
    const types = events.map((e) => e.type);
    const workerFinished = types.findIndex((t, i) => t === 'round_finished' && (events[i] as StreamEventOf<'round_finished'>).agent === 'worker');
    expect(types.lastIndexOf('artifact_delta')).toBeLessThan(workerFinished);
    expect(types).not.toContain('artifact_draft_discarded');
    // No piece splits the emoji's surrogate pair.
    for (const d of deltas) expect(/[\ud800-\udbff]$/.test(d.delta)).toBe(false);

    // The raw argument pieces join to the arguments; the first names the call.
    const calls = ofType(events, 'tool_call_delta').filter((d) => d.agent === 'echo');
    expect(calls.map((d) => d.argumentsDelta).join('')).toBe(SUBMIT_ARGS);
    expect(calls[0]).toMatchObject({ round: 2, callIndex: 0, callId: 'call_w', name: 'submit' });
    expect(
      ofType(events, 'text_delta')
        .map((d) => d.text)
        .join(''),
    ).toBe('Writing it.');
    expect(ofType(events, 'tool_call_delta').filter((d) => d.agent === 'manager')[0]).toMatchObject({ round: 1, name: 'run_worker' });
  });

  it('a listener that opts out of deltas gets none, and the model does not stream', async () => {
    const server = await startFakeOpenAI([{ reply: { toolCalls: [runEcho] } }, { reply: { toolCalls: [{ name: 'submit', arguments: SUBMIT_ARGS }] } }]);
    servers.push(server);
    const session = await sessionWith(new OpenAIModel({ apiKey: 'k', baseURL: server.baseURL, model: 'fake-model', timeoutMs: 2_000, maxRetries: 0 }));
    const events: SessionStreamEvent[] = [];
    const off = session.subscribe((e) => events.push(e), { textDeltas: false });
    await session.send(request);
    off();
    expect(server.requests.map((r) => (r as { stream?: unknown }).stream)).toEqual([undefined, undefined]);
    expect(events.map((e) => e.type).filter((t) => t.includes('delta') || t.includes('draft'))).toEqual([]);
    expect(noteBody(session)).toBe(BODY);
  });
});

describe('drafts that are not published', () => {
  const steps = (worker: ScriptStep[]): ScriptStep[] => [
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', JSON.parse(runEcho.arguments))] },
    ...worker,
  ];

  it('a submit refused by a rule ends its draft with artifact_draft_discarded; the next round drafts anew', async () => {
    const model = new ScriptedModel(
      steps([
        { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { nope: 'Not my tag.', note: 'First try.' } })] },
        { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Second try, with "quotes".' } })] },
      ]),
      { streamPieceChars: 4 },
    );
    const session = await sessionWith(model);
    const events = await run(session);
    const discarded = ofType(events, 'artifact_draft_discarded');
    expect(discarded).toEqual([expect.objectContaining({ round: 2, worker: 'echo', reason: 'refused', rule: 'tagsWithinOutputTags' })]);
    // The refused draft had streamed before it was discarded.
    expect(
      ofType(events, 'artifact_delta')
        .filter((d) => d.round === 2)
        .map((d) => d.delta)
        .join(''),
    ).toBe('Not my tag.First try.');
    expect(drafts(events)).toEqual(new Map([['3:note', 'Second try, with "quotes".']]));
    expect(noteBody(session)).toBe('Second try, with "quotes".');
  });

  it('a refused submit and an accepted one in the same reply: the draft is discarded, then the published body follows whole', async () => {
    const model = new ScriptedModel(
      steps([
        {
          agent: 'worker',
          toolCalls: [scriptedCall('submit', { outputs: { note: 'Draft A', nope: 'x' } }), scriptedCall('submit', { outputs: { note: 'Body B' } })],
        },
      ]),
      { streamPieceChars: 3 },
    );
    const session = await sessionWith(model);
    const events = await run(session);
    expect(noteBody(session)).toBe('Body B');
    const order = events
      .filter((e) => e.type === 'artifact_delta' || e.type === 'artifact_draft_discarded' || e.type === 'artifact_published')
      .map((e) => e.type);
    expect(order.slice(-3)).toEqual(['artifact_draft_discarded', 'artifact_delta', 'artifact_published']);
    expect(drafts(events)).toEqual(new Map([['2:note', 'Body B']]));
  });

  it('a repeated key (JSON.parse keeps the last): the draft is replaced by the published body', async () => {
    const model = new ScriptedModel(steps([{ agent: 'worker', toolCalls: [scriptedCall('submit', '{"outputs": {"note": "first", "note": "second"}}')] }]), {
      streamPieceChars: 5,
    });
    const session = await sessionWith(model);
    const events = await run(session);
    expect(noteBody(session)).toBe('second');
    expect(ofType(events, 'artifact_draft_discarded')).toEqual([expect.objectContaining({ round: 2, reason: 'replaced' })]);
    expect(drafts(events)).toEqual(new Map([['2:note', 'second']]));
  });

  it('a model that does not stream: the whole body comes as one delta before the artifact', async () => {
    const model = new ScriptedModel(steps([{ agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'All at once.' } })] }]));
    const events = await run(await sessionWith(model));
    expect(ofType(events, 'tool_call_delta')).toEqual([]);
    expect(ofType(events, 'artifact_delta')).toEqual([expect.objectContaining({ round: 2, tag: 'note', delta: 'All at once.' })]);
    const types = events.map((e) => e.type);
    expect(types.indexOf('artifact_delta')).toBe(types.indexOf('artifact_published') - 1);
  });

  it('a listener asked at each call (textDeltas: a function) that says no: no streaming, and the body still comes as one delta', async () => {
    const model = new ScriptedModel(steps([{ agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'All at once.' } })] }]));
    const session = await sessionWith(model);
    const events: SessionStreamEvent[] = [];
    const off = session.subscribe((event) => events.push(event), { textDeltas: () => false });
    await session.send(request);
    off();
    expect(ofType(events, 'tool_call_delta')).toEqual([]);
    expect(ofType(events, 'artifact_delta')).toEqual([expect.objectContaining({ round: 2, tag: 'note', delta: 'All at once.' })]);
  });

  it('a worker round that fails discards its draft', async () => {
    const model = new ScriptedModel(
      steps([
        (req) => {
          req.onToolCallDelta?.({ index: 0, id: 'c1', name: 'submit', arguments: '{"outputs": {"note": "Half a' });
          throw new Error('connection dropped');
        },
      ]),
    );
    const events = await run(await sessionWith(model));
    expect(ofType(events, 'artifact_delta').map((d) => d.delta)).toEqual(['Half a']);
    expect(ofType(events, 'artifact_draft_discarded')).toEqual([expect.objectContaining({ round: 2, worker: 'echo', reason: 'failed' })]);
  });
});

describe('streaming without a network', () => {
  it('the demo model streams its drafts in pieces, which join to the body', async () => {
    const session = await sessionWith(new DemoModel());
    await session.send(request);
    await session.send({ type: 'user_confirmed_intake' });
    const events: SessionStreamEvent[] = [];
    const off = session.subscribe((event) => events.push(event));
    await session.send({ type: 'user_approved_next_step' });
    off();
    const deltas = ofType(events, 'artifact_delta');
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.map((d) => d.delta).join('')).toBe(noteBody(session));
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf('artifact_delta')).toBeLessThan(types.lastIndexOf('round_finished'));
  });

  it('a stream read late holds the pieces merged: one delta per tag, one per tool call', async () => {
    const model = new ScriptedModel(
      [
        { agent: 'manager', toolCalls: [scriptedCall('run_worker', JSON.parse(runEcho.arguments))] },
        { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Merged while nobody read.' } })] },
      ],
      { streamPieceChars: 2 },
    );
    const session = await sessionWith(model);
    const stream = session.stream();
    await session.send(request);
    const events: SessionStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(ofType(events, 'artifact_delta').map((d) => d.delta)).toEqual(['Merged while nobody read.']);
    const workerCalls = ofType(events, 'tool_call_delta').filter((d) => d.agent === 'echo');
    expect(workerCalls).toHaveLength(1);
    expect(workerCalls[0]).toMatchObject({ name: 'submit', argumentsDelta: JSON.stringify({ outputs: { note: 'Merged while nobody read.' } }) });
  });
});
