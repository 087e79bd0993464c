/**
 * Fuzzing (issue 7 §4): hostile model replies and hostile user events drive the REAL runtime.
 * Model replies: random and binary text, fences open and closed, huge and deeply nested
 * JSON, "__proto__" / "constructor" keys, odd tag and tool names, control characters,
 * arguments that are not strings, replies that are not even objects, failures that are not
 * Errors. User events: prototype names as types, ids and answer keys, control characters,
 * huge text, non-objects. A package whose tags are named "constructor" and "__proto__" runs
 * next to the bundled tiny one. After every `send()`:
 * - nothing escapes: send resolves, and a refusal is invalid_event or event_refused (never
 *   internal_error);
 * - no prototype is touched: Object.prototype, Array.prototype and Function.prototype keep
 *   their own keys, and `({}).polluted` stays undefined;
 * - every tool call has exactly one tool result, right after its assistant message, and no
 *   tool message is an orphan (the transcript is valid for the API);
 * - a settled session waits for the user or is done, with an empty call queue.
 * After every run the persisted snapshot survives JSON and is restored. A separate check
 * shows a reply is handled in time linear in its size.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stateString } from '../../src/core/machines/refusals.js';
import type { SessionContext } from '../../src/core/machines/session.context.js';
import type { UserEvent } from '../../src/core/machines/session.events.js';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { bundledPackagesDir } from '../../src/skills/index.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { SendResult, Session } from '../../src/runtime/session.js';
import { expectToBe, expectToBeLessThanOrEqual, expectToBeUndefined, expectToContain, expectToEqual } from '../support/hot-expect.js';
import { expectValidTranscript } from '../support/transcript.js';

// STEWARD_FUZZ_RUNS=20000 for a longer hunt; the default keeps the suite at ~10 s.
const NUM_RUNS = Number(process.env.STEWARD_FUZZ_RUNS ?? 1000);
const MAX_BURST = 4;
const json = (value: unknown) => JSON.stringify(value);

// ── a package folder: the bundled tiny package plus one with prototype-named tags ──

const packagesDir = mkdtempSync(join(tmpdir(), 'steward-hostile-'));
afterAll(() => rmSync(packagesDir, { recursive: true, force: true }));
function write(path: string, text: string) {
  mkdirSync(dirname(join(packagesDir, path)), { recursive: true });
  writeFileSync(join(packagesDir, path), text);
}
for (const file of ['manifest.json', 'workers/echo.md', 'workers/summarize.md']) {
  write(`tiny/${file}`, readFileSync(join(bundledPackagesDir, 'tiny', file), 'utf8'));
}
const worker = (id: string, inputTags: string[], outputTags: string[]) =>
  `---\nid: ${id}\ntitle: ${id}\ndescription: Writes ${outputTags.join(', ')}.\ninputTags: ` +
  `${json(inputTags)}\noutputTags: ${json(outputTags)}\n---\nYou are ${id}.\n`;
write('proto/manifest.json', json({ schemaVersion: 1, id: 'proto', title: 'Proto', description: 'Prototype-named tags.', workers: ['maker', 'reader'] }));
write('proto/workers/maker.md', worker('maker', ['request'], ['constructor', '__proto__']));
write('proto/workers/reader.md', worker('reader', ['constructor', '__proto__'], ['toString']));

// ── hostile text ───────────────────────────────────────────────────────────

const controls = [
  '\x1b[2J',
  '\x1b]0;title\x07',
  '\x00',
  '\x07',
  '\u009b',
  '\u202e',
  '\u2066',
  '\r',
  '\n',
  '\t',
  '\u2028',
  '\ud800',
  '\ufeff',
  '`',
  '```',
  '{',
  '[',
  '"',
  '\\',
];
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 100 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.array(fc.oneof(fc.constantFrom(...controls), fc.string({ maxLength: 4 })), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', ''),
);

/** Shapes that once made a backtracking fence regex explode, and JSON nested past any stack. */
const bigShapes: ((n: number) => string)[] = [
  (n) => '```' + ' '.repeat(n),
  (n) => '```json' + '\n'.repeat(n) + 'x',
  (n) => '```' + ' ```'.repeat(n >> 2),
  (n) => '{"a":' + '['.repeat(n),
  (n) => '{"tool": "finish", "arguments": {"summary": ' + '['.repeat(n) + ']'.repeat(n) + '}}',
  (n) => json({ outputs: { note: 'x'.repeat(n) } }),
  (n) => '```json\n' + json({ outputs: { constructor: 'C', __proto__: 'P'.repeat(n) } }) + '\n```',
];
const bigText = fc.tuple(fc.constantFrom(...bigShapes), fc.integer({ min: 1, max: 5_000 })).map(([shape, n]) => shape(n));

/** JSON objects with prototype keys, written as text so "__proto__" stays an own key. */
const protoJson = [
  '{"__proto__": {"polluted": true}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  '{"tags": ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]}',
  '{"tags": ["\\u001b[2J", "", "request"]}',
  '{"outputs": {"__proto__": "P body", "constructor": "C body"}}',
  '{"outputs": {"__proto__": {"polluted": true}, "constructor": "C"}}',
  '{"outputs": {"toString": "T body"}}',
  '{"outputs": {"note": "n", "__proto__": "p"}}',
  '{"outputs": {"summary": "s", "constructor": {"prototype": {"polluted": 1}}}}',
  '{"workerId": "__proto__", "reason": "x", "requiresApproval": false}',
  '{"workerId": "constructor", "reason": "x", "requiresApproval": true}',
  '{"workerId": "echo", "reason": "x", "requiresApproval": true, "roleId": "__proto__"}',
  '{"workerId": "echo", "reason": "x", "requiresApproval": true, "__proto__": {"inputTags": ["x"]}}',
  '{"questions": ["__proto__", "\\u001b]0;t\\u0007"], "message": "\\u202e"}',
  '{"summary": "\\u001b[2J done", "__proto__": null}',
];

/** Arguments that pass (or nearly pass) a schema, so sessions also make progress. */
const plausible: [string, string][] = [
  ['read_blackboard', json({ tags: ['request', 'note', 'constructor', '__proto__'] })],
  ['list_workers', '{}'],
  ['list_artifacts', ''],
  ['run_worker', json({ workerId: 'echo', reason: 'Restate it.', requiresApproval: false })],
  ['run_worker', json({ workerId: 'maker', reason: 'Make them.', requiresApproval: false })],
  ['run_worker', json({ workerId: 'reader', reason: 'Read them.', requiresApproval: true })],
  ['run_worker', json({ workerId: 'summarize', reason: 'Summarize.', requiresApproval: false })],
  ['ask_user', json({ message: 'Which tone?', questions: ['Tone?'] })],
  ['review_blackboard', json({ message: 'The board.' })],
  ['finish', json({ summary: 'Done.' })],
  ['submit', json({ outputs: { note: 'A note.' } })],
  ['submit', '{"outputs": {"constructor": "C", "__proto__": "P"}}'],
  ['submit', '{"outputs": {"toString": "T"}}'],
  ['submit', json({ outputs: { summary: 'A summary.' } })],
  ['ask_user', json({ questions: ['What is the topic?'] })],
];
const toolNames = [...new Set(plausible.map(([name]) => name)), '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'approve', '', '\x1b[2J'];

const hostileArguments: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...protoJson) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 2, arbitrary: hostileText },
  { weight: 1, arbitrary: bigText },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(42, null, undefined, true, { tags: ['request'] }, ['x'], JSON.parse('{"__proto__": {"polluted": true}}')) },
);

const hostileId = fc.oneof(fc.constant(undefined), fc.constantFrom('__proto__', 'constructor', 'same', 'same', ''), fc.string({ maxLength: 8 }));

const genCall: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(fc.constantFrom(...plausible), hostileId).map(([[name, args], id]) => ({ id, type: 'function', function: { name, arguments: args } })),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      id: hostileId,
      type: fc.constant('function'),
      function: fc.record({ name: fc.constantFrom(...toolNames), arguments: hostileArguments }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 7, 'call', {}, { function: null }, { id: 'x', function: { name: 42, arguments: '{}' } }) },
);

type GenReply = { kind: 'reply'; reply: unknown } | { kind: 'throw'; error: unknown };
const genReply: fc.Arbitrary<GenReply> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({ content: fc.option(hostileText, { nil: null }), toolCalls: fc.array(genCall, { minLength: 1, maxLength: 3 }) })
      .map((reply) => ({ kind: 'reply' as const, reply })),
  },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        hostileText,
        bigText,
        fc.constantFrom(...protoJson),
        fc.constantFrom(...protoJson).map((j) => '```json\n' + j + '\n```'),
      )
      .map((content) => ({ kind: 'reply' as const, reply: { content, toolCalls: [] } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<unknown>(
        null,
        undefined,
        42,
        'text',
        { content: 5, toolCalls: 'x' },
        { toolCalls: [null] },
        { content: null, toolCalls: [], usage: { promptTokens: 'many' } },
      )
      .map((reply) => ({ kind: 'reply' as const, reply })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<unknown>(new Error('HTTP 503 \x1b[2J'), 'a string, not an Error', null, { message: '\u202e' })
      .map((error) => ({ kind: 'throw' as const, error })),
  },
);

// ── hostile user events ──────────────────────────────────────────────────────

const hostileEvent: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    { type: '__proto__' },
    { type: 'constructor' },
    { type: 'toString' },
    { type: 'hasOwnProperty' },
    JSON.parse('{"type": "user_submitted_input", "text": "hi", "__proto__": {"polluted": true}}'),
    JSON.parse('{"type": "user_answered_questions", "answers": {"__proto__": "x", "constructor": "y", "q1": "z"}}'),
    { type: 'user_answered_questions', answers: { q1: 42 } },
    { type: 'user_accepted_artifact', artifactId: '__proto__' },
    { type: 'user_rejected_artifact', artifactId: 'constructor', reason: '\x1b[2J' },
    { type: 'user_selected_package', packageId: '__proto__' },
    { type: 'user_selected_package', packageId: 'constructor' },
    { type: 'user_selected_package', packageId: 'toString' },
    { type: 'user_submitted_input', text: 'x'.repeat(50_000) },
    Object.assign(Object.create(null) as object, { type: 'user_confirmed_intake' }),
    [],
    null,
    42,
    'user_confirmed_intake',
    { type: ['user_confirmed_intake'] },
  ),
  hostileText.map((text) => ({ type: 'user_submitted_input', text })),
  hostileText.map((reason) => ({ type: 'user_rejected_next_step', reason })),
);
const validEvents: unknown[] = [
  { type: 'user_submitted_input', text: 'A note about otters.' },
  { type: 'user_confirmed_intake' },
  { type: 'user_approved_next_step' },
  { type: 'user_skipped_questions' },
  { type: 'user_answered_questions', answers: { q1: 'Yes.' } },
  { type: 'user_selected_package', packageId: 'proto' },
  { type: 'user_rejected_next_step', reason: 'Another worker.' },
];
/** One of the events the state declares, with a valid payload, so sessions also make progress. */
function validEvent(session: Session, pick: number): unknown {
  const accepted = session.view().acceptedEvents;
  const type = accepted.length ? accepted[pick % accepted.length]! : 'user_submitted_input';
  const fixed = validEvents.find((e) => (e as { type: string }).type === type);
  return fixed ?? { type, artifactId: contextOf(session).artifacts.find((a) => a.status === 'pending_review')?.id ?? 'a1', reason: 'Shorter.' };
}

type GenUserStep = { kind: 'event'; event: unknown } | { kind: 'accept' } | { kind: 'valid'; pick: number };
type GenStep = { kind: 'reply'; reply: GenReply } | GenUserStep;
const genStep: fc.Arbitrary<GenStep> = fc.oneof(
  { weight: 3, arbitrary: genReply.map((reply) => ({ kind: 'reply' as const, reply })) },
  { weight: 2, arbitrary: hostileEvent.map((event) => ({ kind: 'event' as const, event })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ kind: 'valid' as const, pick })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'accept' as const }) },
);
const genScenario = fc.record({
  packageId: fc.constantFrom<string | undefined>('proto', 'proto', 'tiny', undefined),
  steps: fc.array(genStep, { minLength: 1, maxLength: 24 }),
});

// ── the model: replays the generated replies, then answers sensibly ──────────

const script: { replies: GenReply[]; session: Session | null; nextId: number } = { replies: [], session: null, nextId: 0 };

function fallbackReply(request: ModelRequest): ModelReply {
  const id = `fallback_call_${++script.nextId}`;
  if (request.agent === 'manager')
    return { content: null, toolCalls: [{ id, type: 'function', function: { name: 'ask_user', arguments: json({ message: 'What next?' }) } }] };
  const context = script.session?.actorRef.getSnapshot().context as SessionContext | undefined;
  const worker = context?.package?.workers.find((w) => w.id === context.step?.workerId);
  const outputs = Object.fromEntries((worker?.outputTags ?? ['note']).map((tag) => [tag, `The ${tag}.`]));
  return { content: null, toolCalls: [{ id, type: 'function', function: { name: 'submit', arguments: json({ outputs }) } }] };
}

const model: Model = {
  label: 'hostile model',
  async complete(request) {
    const next = script.replies.shift();
    if (!next) return fallbackReply(request);
    if (next.kind === 'throw') throw next.error;
    return next.reply as ModelReply;
  },
};

const runtime = createRuntime({ model, maxBurst: MAX_BURST, packagesDir });

// ── invariants ───────────────────────────────────────────────────────────
// Checked after every send: hot-expect.ts's assertions, which call expect() only on a failure.

const protoKeys = () => [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) => Object.getOwnPropertyNames(p).sort().join(','));
const pristine = protoKeys();
function checkPrototypes(where: string): void {
  expectToEqual(protoKeys(), pristine, `${where}: a prototype gained or lost a key`);
  expectToBeUndefined(({} as Record<string, unknown>).polluted, `${where}: Object.prototype polluted`);
  expectToBe(Object.getPrototypeOf({}), Object.prototype);
}

const contextOf = (session: Session) => session.actorRef.getSnapshot().context as SessionContext;
const stateOf = (session: Session) => {
  const s = session.actorRef.getSnapshot();
  return s.status === 'done' ? 'done' : stateString(s.value);
};

function checkAfterSend(session: Session, result: SendResult, event: unknown): void {
  const where = `after send(${String(JSON.stringify(event))?.slice(0, 120)}) in ${stateOf(session)}`;
  checkPrototypes(where);
  const context = contextOf(session);
  expectValidTranscript('managerMessages', context.transcripts.manager.messages);
  expectValidTranscript('workerMessages', context.transcripts.worker.messages);
  expectToBeLessThanOrEqual(context.burst, context.maxBurst);
  if (result.ok) {
    const state = stateOf(session);
    expectToBe(state === 'done' || state.startsWith('waiting_user.'), true, `${where}: resolved in ${state}`);
    expectToEqual(context.reply.queue, [], where);
  } else {
    expectToContain(['invalid_event', 'event_refused'], result.error.code, `${where}: ${result.error.code}: ${result.error.message}`);
  }
  for (const versions of Object.values(context.blackboard)) {
    for (const v of versions)
      expectToBe('body' in v ? typeof v.body : typeof v.size, 'body' in v ? 'string' : 'number', `${where}: a blackboard body is not text`);
  }
}

// ── the property ───────────────────────────────────────────────────────────

describe('hostile model replies and user events (fast-check, real runtime)', () => {
  it(`nothing escapes, no prototype is touched, the transcript stays valid: ${NUM_RUNS} runs`, async () => {
    const started = Date.now();
    const stats = { sends: 0, refused: 0, states: new Set<string>(), tags: new Set<string>() };
    await fc.assert(
      fc.asyncProperty(genScenario, async ({ packageId, steps }) => {
        const session = await runtime.createSession(packageId ? { packageId } : {});
        script.replies = [];
        script.session = session;
        try {
          for (const step of steps) {
            if (step.kind === 'reply') {
              script.replies.push(step.reply);
              continue;
            }
            const context = contextOf(session);
            const event =
              step.kind === 'event'
                ? step.event
                : step.kind === 'accept'
                  ? { type: 'user_accepted_artifact', artifactId: context.artifacts.find((a) => a.status === 'pending_review')?.id ?? 'a1' }
                  : validEvent(session, step.pick);
            let result: SendResult;
            try {
              result = await session.send(event as UserEvent); // hostile on purpose: send() checks it as it would a JS caller's
            } catch (error) {
              throw new Error(`send(${String(JSON.stringify(event))?.slice(0, 200)}) threw in ${stateOf(session)}: ${String(error)}`);
            }
            stats.sends++;
            if (!result.ok) stats.refused++;
            stats.states.add(stateOf(session));
            checkAfterSend(session, result, event);
          }
          for (const tag of Object.keys(contextOf(session).blackboard)) stats.tags.add(tag);
          // The persisted snapshot survives JSON and is restored as a valid session.
          const persisted = JSON.parse(JSON.stringify(session.persisted())) as unknown;
          const restored = runtime.restoreSession(persisted);
          expectToEqual(Object.keys(contextOf(restored).blackboard), Object.keys(contextOf(session).blackboard));
          restored.stop();
          checkPrototypes('after the persistence round trip');
        } finally {
          session.stop();
        }
      }),
      { numRuns: NUM_RUNS },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `hostile: ${NUM_RUNS} runs, ${stats.sends} sends (${stats.refused} refused) in ${seconds}s; tags ` +
        `written: ${[...stats.tags].sort().join(', ')}; states: ${[...stats.states].sort().join(', ')}`,
    );
    // The hostile generators must still reach the places where names meet keyed data (the
    // reader's "toString", two accepted artifacts deep, is reached in most runs;
    // test/runtime/prototype-names.test.ts walks that path every time).
    // (Not 'note': an artifact accepted on the plain package ends only 2–6 runs of 1,000, so
    // about one run in 20 had none; the review and done states below show that flow is reached.)
    for (const tag of ['constructor', '__proto__']) expect(stats.tags, tag).toContain(tag);
    for (const state of ['waiting_user.review_artifact', 'done']) expect(stats.states, state).toContain(state);
  }, 120_000);
});

describe('a hostile reply is handled in time linear in its size', () => {
  /** The fastest of `runs` sends of one reply (ms): a busy machine only ever adds time. */
  async function handlingTime(content: string, runs = 5): Promise<number> {
    let best = Infinity;
    for (let i = 0; i < runs; i++) {
      const session = await runtime.createSession({ packageId: 'tiny' });
      script.session = session;
      script.replies = [{ kind: 'reply', reply: { content, toolCalls: [] } }];
      const start = performance.now();
      const result = await session.send({ type: 'user_submitted_input', text: 'Go.' });
      best = Math.min(best, performance.now() - start);
      session.stop();
      expect(result.ok).toBe(true);
    }
    return best;
  }

  it.each(bigShapes.map((shape, i) => [i, shape] as const))(
    'shape %i: 100,000 characters take at most 300x the time of 1,000',
    async (_i, shape) => {
      const small = shape(1_000);
      const large = shape(100_000);
      await handlingTime(small, 3); // warm up
      const base = await handlingTime(small);
      const big = await handlingTime(large);
      // 100x the input, 100x the time, times 3 for GC and a busy machine; quadratic would be 10,000x.
      expect(big).toBeLessThan(300 * base);
    },
    60_000,
  );
});
