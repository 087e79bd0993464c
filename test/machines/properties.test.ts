/**
 * Property-based test of the session (DESIGN §10): random sequences of user events (valid and
 * invalid payloads, right and wrong artifact ids) interleaved with scripted model replies
 * (valid and invalid tool calls, model failures) drive the REAL runtime, and after every
 * `send()` the invariants below must hold:
 *
 * - `send()` never throws: a refused or malformed event resolves `{ ok: false, … }`;
 * - the burst never exceeds maxBurst;
 * - every assistant tool call (manager and worker transcripts) has exactly one tool result,
 *   and the results directly follow their assistant message (valid for the OpenAI API);
 * - blackboard versions only grow: per tag the count never shrinks, old versions never change;
 * - artifact statuses move only along LEGAL_ARTIFACT_MOVES; a new artifact is pending_review;
 * - a refused event leaves state and context unchanged, except the rejection log;
 * - a question card is shown only in intake, input, review_artifact or worker_questions;
 * - with a token budget (maxBurstTokens, random per session), every model call started within
 *   it: the burst's tokens before the last call stay ≤ the budget;
 * - edits (of a step, of an artifact's bodies) and `by` ride along on random events: a user
 *   version of a tag is written by the event's `by` (or "user").
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEGAL_ARTIFACT_MOVES, type Artifact } from '../../src/core/blackboard/artifacts.js';
import type { Blackboard, TagSlot, TagVersion } from '../../src/core/blackboard/blackboard.js';
import { stateString } from '../../src/core/machines/refusals.js';
import type { SessionContext } from '../../src/core/machines/session.context.js';
import type { UserEvent, UserEventType } from '../../src/core/machines/session.events.js';
import type { Model, ModelReply, ModelRequest, ToolCall } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { SendResult, Session } from '../../src/runtime/session.js';
import {
  expectToBe,
  expectToBeDefined,
  expectToBeGreaterThan,
  expectToBeGreaterThanOrEqual,
  expectToBeLessThanOrEqual,
  expectToContain,
  expectToEqual,
} from '../support/hot-expect.js';
import { expectValidTranscript } from '../support/transcript.js';

const MAX_BURST = 3;
const NUM_RUNS = 1000;

// ── generated model replies ───────────────────────────────────────────────────

/** A tool call as generated; the model gives it a fresh id when it is used. */
interface GenCall {
  name: string;
  arguments: string;
}
type GenReply = { kind: 'reply'; content: string | null; calls: GenCall[]; tokens?: number | undefined } | { kind: 'failure'; message: string };

const json = (value: unknown) => JSON.stringify(value);

/** Arguments that pass (or nearly pass) each tool's schema, so that sessions make progress. */
const plausibleCalls: GenCall[] = [
  { name: 'read_blackboard', arguments: json({ tags: ['request', 'note'] }) },
  { name: 'list_workers', arguments: '{}' },
  { name: 'list_artifacts', arguments: '' },
  { name: 'run_worker', arguments: json({ workerId: 'echo', reason: 'Restate it.', requiresApproval: true }) },
  { name: 'run_worker', arguments: json({ workerId: 'echo', reason: 'Restate it.', requiresApproval: false }) },
  { name: 'run_worker', arguments: json({ workerId: 'summarize', reason: 'Summarize.', requiresApproval: false }) },
  { name: 'ask_user', arguments: json({ message: 'Which tone?', questions: ['Tone?', 'Length?'] }) },
  { name: 'ask_user', arguments: json({ message: 'What next?', assessment: 'Fine so far.' }) },
  { name: 'review_blackboard', arguments: json({ message: 'The board.' }) },
  { name: 'finish', arguments: json({ summary: 'Done.' }) },
  { name: 'submit', arguments: json({ outputs: { note: 'A note.' } }) },
  { name: 'submit', arguments: json({ outputs: { summary: 'A summary.' } }) },
  { name: 'ask_user', arguments: json({ questions: ['What is the topic?'] }) },
];

/** Calls that break a rule: wrong actor, bad JSON, schema, registry, tags, tag lists. */
const brokenCalls: GenCall[] = [
  { name: 'run_worker', arguments: json({ workerId: 'ghost', reason: 'x', requiresApproval: false }) },
  { name: 'run_worker', arguments: json({ workerId: 'echo', reason: 'x', requiresApproval: true, outputTags: ['note'] }) },
  { name: 'run_worker', arguments: json({ workerId: 'echo', reason: 'x', requiresApproval: true, roleId: 'nope' }) },
  { name: 'read_blackboard', arguments: '{"tags": [' },
  { name: 'read_blackboard', arguments: json({ tags: [] }) },
  { name: 'submit', arguments: json({ outputs: { bogus: 'x' } }) },
  { name: 'submit', arguments: json({ outputs: {} }) },
  { name: 'submit', arguments: 'not json at all' },
  { name: 'ask_user', arguments: json({ questions: [] }) },
  { name: 'finish', arguments: json({ summary: 1, extra: true }) },
  { name: 'approve', arguments: '{}' },
  { name: 'user_accepted_artifact', arguments: json({ artifactId: 'a1' }) },
  { name: 'fly_to_the_moon', arguments: '{}' },
];

const toolNames = [...new Set([...plausibleCalls, ...brokenCalls].map((c) => c.name))];

const genCall: fc.Arbitrary<GenCall> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...plausibleCalls) },
  { weight: 3, arbitrary: fc.constantFrom(...brokenCalls) },
  { weight: 1, arbitrary: fc.record({ name: fc.constantFrom(...toolNames), arguments: fc.json({ maxDepth: 2 }) }) },
);

/** Content without tool calls: plain text, legacy JSON decisions, Phase A worker JSON. */
const legacyContent = fc.constantFrom(
  'What would you like the note to say?',
  json({ tool: 'run_worker', arguments: { workerId: 'echo', reason: 'legacy', requiresApproval: true } }),
  json({ tool: 'finish' }),
  json({ outputs: { note: 'Phase A note.' }, askUser: ['Anything else?'] }),
  json({ outputs: { summary: 'Phase A summary.' } }),
  json({ askUser: 'Which topic?' }),
  '```json\n{"tool": "list_workers"}\n```',
  '   ',
);

const genReply: fc.Arbitrary<GenReply> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('reply' as const),
      content: fc.constant(null),
      calls: fc.array(genCall, { minLength: 1, maxLength: 3 }),
      tokens: fc.option(fc.integer({ min: 20, max: 200 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('reply' as const), content: fc.option(legacyContent, { nil: null }), calls: fc.constant<GenCall[]>([]) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('failure' as const), message: fc.constantFrom('HTTP 503', 'socket hang up') }) },
);

// ── generated user events ─────────────────────────────────────────────────────

/** An artifact id resolved when the event is sent: the one under review, or a fixed one. */
type ArtifactRef = 'under_review' | 'a1' | 'a2' | 'a3' | 'zz';
type GenUserStep =
  | { kind: 'event'; event: unknown }
  | {
      kind: 'artifact';
      type: 'user_accepted_artifact' | 'user_rejected_artifact';
      ref: ArtifactRef;
      reason?: string;
      edit?: 'own_tag' | 'other_tag' | 'proto';
      by?: string;
    }
  /** Picks one of the events the current state declares, with a valid payload. */
  | { kind: 'accepted'; pick: number };

const userEventStep: fc.Arbitrary<GenUserStep> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom<unknown>(
        { type: 'user_submitted_input', text: 'A short note about otters.' },
        { type: 'user_submitted_input', text: 'Make it funnier.' },
        { type: 'user_confirmed_intake' },
        { type: 'user_approved_next_step' },
        { type: 'user_approved_next_step', by: 'alice', edits: { reason: 'The edited task.' } },
        { type: 'user_approved_next_step', edits: { roleId: 'no-such-role' } },
        { type: 'user_approved_next_step', edits: {} },
        { type: 'user_submitted_input', text: 'Otters, by Bob.', by: 'bob' },
        { type: 'user_rejected_next_step', reason: 'Not yet.' },
        { type: 'user_rejected_next_step' },
        { type: 'user_answered_questions', answers: { q1: 'Cheerful.', q2: 'Short.' } },
        { type: 'user_answered_questions', answers: {} },
        { type: 'user_skipped_questions' },
        { type: 'user_selected_package', packageId: 'tiny' },
        { type: 'user_selected_package', packageId: 'nope' },
      )
      .map((event) => ({ kind: 'event' as const, event })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<unknown>(
        { type: 'user_submitted_input', text: '   ' },
        { type: 'user_submitted_input' },
        { type: 'user_submitted_input', text: 'x', extra: 1 },
        { type: 'user_answered_questions', answers: 'yes' },
        { type: 'user_accepted_artifact', artifactId: '' },
        { type: 'user_submitted_input', text: 'x', by: '' },
        { type: 'user_submitted_input', text: 'x', by: 'x'.repeat(500) },
        { type: 'user_selected_package' },
        { type: 'no_such_event' },
        { type: 'xstate.done.actor.managerTurn', output: { content: null, toolCalls: [] } },
        null,
        42,
        'user_confirmed_intake',
      )
      .map((event) => ({ kind: 'event' as const, event })),
  },
  {
    // Edits that can be accepted, often enough that 1,000 sessions always take some (the
    // check after the run); without this entry they came to 2–4 a run, and 0 about one run in 20.
    weight: 1,
    arbitrary: fc.constantFrom<GenUserStep>(
      { kind: 'artifact', type: 'user_accepted_artifact', ref: 'under_review', edit: 'own_tag', by: 'carol' },
      { kind: 'event', event: { type: 'user_approved_next_step', by: 'alice', edits: { reason: 'The edited task.' } } },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('artifact' as const),
      type: fc.constantFrom('user_accepted_artifact' as const, 'user_rejected_artifact' as const),
      ref: fc.constantFrom<ArtifactRef>('under_review', 'under_review', 'a1', 'a2', 'a3', 'zz'),
      reason: fc.option(fc.constantFrom('Shorter.', ''), { nil: undefined }),
      edit: fc.option(fc.constantFrom('own_tag' as const, 'own_tag' as const, 'other_tag' as const, 'proto' as const), { nil: undefined }),
      by: fc.option(fc.constantFrom('carol', 'dave'), { nil: undefined }),
    }),
  },
  { weight: 6, arbitrary: fc.nat().map((pick) => ({ kind: 'accepted' as const, pick })) },
);

type GenStep = { kind: 'reply'; reply: GenReply } | GenUserStep;
const genStep: fc.Arbitrary<GenStep> = fc.oneof(
  { weight: 3, arbitrary: userEventStep },
  { weight: 2, arbitrary: genReply.map((reply) => ({ kind: 'reply' as const, reply })) },
);
const genScenario = fc.record({
  withPackage: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  maxBurstTokens: fc.option(fc.constantFrom(150, 400), { nil: undefined }),
  steps: fc.array(genStep, { minLength: 1, maxLength: 30, size: 'max' }),
});

// ── the function-driven model ─────────────────────────────────────────────────

/** Per-run state of the model: the replies still to give, and the session it serves. */
const script: { replies: GenReply[]; session: Session | null; nextId: number } = { replies: [], session: null, nextId: 0 };

function fallbackReply(request: ModelRequest): ModelReply {
  const id = `fallback_call_${++script.nextId}`;
  if (request.agent === 'manager') {
    return { content: null, toolCalls: [{ id, type: 'function', function: { name: 'ask_user', arguments: json({ message: 'What next?' }) } }] };
  }
  const context = script.session?.actorRef.getSnapshot().context;
  const worker = context?.package?.workers.find((w) => w.id === context.step?.workerId);
  const outputs = Object.fromEntries((worker?.outputTags ?? ['note']).map((tag) => [tag, `The ${tag}.`]));
  return { content: null, toolCalls: [{ id, type: 'function', function: { name: 'submit', arguments: json({ outputs }) } }] };
}

const model: Model = {
  label: 'property-test model',
  async complete(request) {
    const next = script.replies.shift();
    if (!next) return fallbackReply(request);
    if (next.kind === 'failure') throw new Error(next.message);
    const toolCalls: ToolCall[] = next.calls.map((c) => ({
      id: `call_${++script.nextId}`,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    return { content: next.content, toolCalls, ...(next.tokens ? { usage: { promptTokens: next.tokens - 10, completionTokens: 10 } } : {}) };
  },
};

const runtime = createRuntime({ model, maxBurst: MAX_BURST });

// ── invariants ───────────────────────────────────────────────────────────
// Checked after every send of every session: hot-expect.ts's assertions, which call expect() only on a failure.

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const contextOf = (session: Session) => session.actorRef.getSnapshot().context as SessionContext;
const stateOf = (session: Session) => {
  const s = session.actorRef.getSnapshot();
  return s.status === 'done' ? 'done' : stateString(s.value);
};

function checkBlackboard(before: Blackboard, after: Blackboard): void {
  // A tag's list: [{archived, size}?, ...versions with bodies, ascending]; the last is the latest.
  const count = (versions: readonly TagSlot[]) => {
    const last = versions.at(-1);
    return last && 'body' in last ? last.version : 0;
  };
  for (const [tag, versions] of Object.entries(before)) {
    const now = after[tag];
    expectToBeDefined(now, `tag ${tag} disappeared`);
    expectToBeGreaterThanOrEqual(count(now!), count(versions), `tag ${tag} lost versions`);
    // An older version may leave the context for the archive (counted in the summary); a
    // version that stays is unchanged.
    for (const v of versions) {
      if (!('body' in v)) continue;
      const kept = now!.find((x) => 'body' in x && x.version === v.version);
      if (kept) expectToEqual(kept, v, `version ${v.version} of ${tag} changed`);
    }
  }
  for (const [tag, versions] of Object.entries(after)) {
    const held = versions.filter((v): v is TagVersion => 'body' in v);
    const summary = versions.filter((v) => !('body' in v));
    expectToBe(summary.length <= 1 && (summary.length === 0 || versions[0] === summary[0]), true, `${tag}: one summary of archived versions, first`);
    expectToBe(versions.at(-1) && 'body' in versions.at(-1)!, true, `the latest version of ${tag} keeps its body`);
    held.forEach((v, i) => i > 0 && expectToBeGreaterThan(v.version, held[i - 1]!.version, `${tag} versions are ascending`));
    const archived = summary[0] && !('body' in summary[0]) ? summary[0].archived : 0;
    expectToBe(archived + held.length, count(versions), `${tag}: every version is held or counted as archived`);
  }
}

function checkArtifacts(before: readonly Artifact[], after: readonly Artifact[]): void {
  expectToBeGreaterThanOrEqual(after.length, before.length, 'artifacts never disappear');
  before.forEach((old, i) => {
    const now = after[i]!;
    expectToBe(now.id, old.id);
    if (now.status !== old.status) {
      expectToContain(LEGAL_ARTIFACT_MOVES[old.status], now.status, `artifact ${old.id}: ${old.status} → ${now.status} is not a legal move`);
    }
  });
  for (const fresh of after.slice(before.length)) {
    expectToBe(fresh.status, 'pending_review', `new artifact ${fresh.id} must start as pending_review`);
  }
}

function checkInvariants(session: Session, result: SendResult, before: { state: string; context: SessionContext }): void {
  const after = contextOf(session);
  const state = stateOf(session);
  expectToBeLessThanOrEqual(after.burst, after.maxBurst);
  expectToBe(after.maxBurst, MAX_BURST);
  if (after.ledger.maxBurstTokens !== null) {
    expectToBeLessThanOrEqual(
      after.ledger.burstTokens - after.ledger.lastCallTokens,
      after.ledger.maxBurstTokens,
      'every model call starts within the token budget',
    );
  }
  for (const versions of Object.values(after.blackboard)) {
    for (const v of versions) if ('body' in v) expectToBe(typeof v.writtenBy === 'string' && v.writtenBy.length > 0 && v.writtenBy.length <= 120, true);
  }
  expectValidTranscript('managerMessages', after.transcripts.manager.messages);
  expectValidTranscript('workerMessages', after.transcripts.worker.messages);
  checkBlackboard(before.context.blackboard, after.blackboard);
  checkArtifacts(before.context.artifacts, after.artifacts);
  if (result.ok) {
    expectToBe(state === 'done' || state.startsWith('waiting_user.'), true, `send() resolved in ${state}`);
    expectToEqual(after.reply.queue, []);
    // A question card shows only where it can be answered (input, worker_questions), rides
    // along (review_artifact) or clarifies the request (intake): never a stale one elsewhere.
    if (after.questions !== null) {
      expectToContain(
        ['waiting_user.intake', 'waiting_user.input', 'waiting_user.review_artifact', 'waiting_user.worker_questions'],
        state,
        `a question card in ${state}`,
      );
    }
    return;
  }
  expectToContain(['invalid_event', 'event_refused'], result.error.code, `unexpected error: ${result.error.code}: ${result.error.message}`);
  expectToBe(state, before.state, 'a refused event changes no state');
  const { rejections: _before, ...restBefore } = before.context;
  const { rejections: _after, ...restAfter } = clone(after);
  expectToEqual(restAfter, restBefore, 'a refused event changes nothing in context but the rejection log');
  if (result.error.code === 'invalid_event') expectToBe(after.rejections.length, before.context.rejections.length);
}

// ── resolving generated steps into events ─────────────────────────────────────

function validEvent(type: UserEventType, context: SessionContext): UserEvent {
  const underReview = context.artifacts.find((a) => a.status === 'pending_review')?.id ?? 'a1';
  switch (type) {
    case 'user_selected_package':
      return { type, packageId: 'tiny' };
    case 'user_submitted_input':
      return { type, text: 'Keep going.' };
    case 'user_accepted_artifact':
      return { type, artifactId: underReview };
    case 'user_rejected_artifact':
      return { type, artifactId: underReview, reason: 'Shorter, please.' };
    case 'user_rejected_next_step':
      return { type, reason: 'Another worker.' };
    case 'user_answered_questions':
      return { type, answers: { q1: 'Yes.' } };
    default:
      return { type } as UserEvent;
  }
}

function resolve(step: GenUserStep, session: Session): unknown {
  const context = contextOf(session);
  switch (step.kind) {
    case 'event':
      return step.event;
    case 'artifact': {
      const id = step.ref === 'under_review' ? (context.artifacts.find((a) => a.status === 'pending_review')?.id ?? 'a1') : step.ref;
      const pending = context.artifacts.find((a) => a.id === id);
      const ownTag = pending ? Object.keys(pending.tags)[0] : undefined;
      const edits =
        step.type !== 'user_accepted_artifact' || step.edit === undefined
          ? undefined
          : step.edit === 'proto'
            ? (JSON.parse('{"__proto__": "polluted?"}') as Record<string, string>)
            : Object.fromEntries([[step.edit === 'own_tag' && ownTag ? ownTag : 'not_a_tag', "The user's body."]]);
      return {
        type: step.type,
        artifactId: id,
        ...(step.reason !== undefined ? { reason: step.reason } : {}),
        ...(edits ? { edits } : {}),
        ...(step.by !== undefined ? { by: step.by } : {}),
      };
    }
    case 'accepted': {
      const accepted = session.view().acceptedEvents;
      if (accepted.length === 0) return { type: 'user_submitted_input', text: 'Anyone there?' };
      return validEvent(accepted[step.pick % accepted.length]!, context);
    }
  }
}

// ── the property ───────────────────────────────────────────────────────────

describe('session properties (fast-check, real runtime)', () => {
  it(`keeps its invariants over ${NUM_RUNS} random sessions`, async () => {
    const started = Date.now();
    const stats = { sends: 0, refused: 0, invalid: 0, states: new Set<string>(), budgetStops: 0, edited: 0 };
    await fc.assert(
      fc.asyncProperty(genScenario, async ({ withPackage, maxBurstTokens, steps }) => {
        const session = await runtime.createSession({
          ...(withPackage ? { packageId: 'tiny' } : {}),
          ...(maxBurstTokens !== undefined ? { maxBurstTokens } : {}),
        });
        script.replies = [];
        script.session = session;
        try {
          await session.settled();
          for (const step of steps) {
            if (step.kind === 'reply') {
              script.replies.push(step.reply);
              continue;
            }
            const event = resolve(step, session);
            const before = { state: stateOf(session), context: clone(contextOf(session)) };
            let result: SendResult;
            try {
              result = await session.send(event as UserEvent); // may be malformed on purpose: send() checks it
            } catch (error) {
              throw new Error(`send(${JSON.stringify(event)}) threw in ${before.state}: ${String(error)}`);
            }
            stats.sends++;
            if (!result.ok) stats[result.error.code === 'invalid_event' ? 'invalid' : 'refused']++;
            stats.states.add(stateOf(session));
            checkInvariants(session, result, before);
            if (result.ok && result.view.notice?.startsWith('This burst used')) stats.budgetStops++;
            if (result.ok && (event as { edits?: unknown } | null)?.edits !== undefined) stats.edited++;
          }
        } finally {
          session.stop();
        }
      }),
      { numRuns: NUM_RUNS },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `properties: ${NUM_RUNS} runs, ${stats.sends} sends (${stats.refused} refused, ${stats.invalid} invalid) in ${seconds}s; ` +
        `states reached: ${[...stats.states].sort().join(', ')}`,
    );
    console.log(`properties: ${stats.budgetStops} bursts stopped by the token budget, ${stats.edited} accepted events with edits`);
    expect(stats.budgetStops).toBeGreaterThan(0);
    expect(stats.edited).toBeGreaterThan(0);
    // The generators must reach the interesting waiting points, or the property proves little.
    for (const state of [
      'waiting_user.intake',
      'waiting_user.input',
      'waiting_user.approve_step',
      'waiting_user.review_artifact',
      'waiting_user.worker_questions',
      'waiting_user.revision',
      'done',
    ]) {
      expect(stats.states, state).toContain(state);
    }
  }, 120_000);
});
