/**
 * Model-based test of the session statechart (DESIGN §10).
 *
 * `getShortestPaths` from `xstate/graph` walks the machine with an events function that
 * offers, per state, only what that state can take: the user events its active state nodes
 * declare (`ownEvents`, since the root wildcard makes `snapshot.can()` true for everything)
 * and, while a turn runs, the actor results as `xstate.done.actor.*` / `xstate.error.actor.*`
 * events carrying a catalogue of model replies. A few refused events are offered too, so the
 * wildcard `recordRejection` transition is exercised.
 *
 * Each path is replayed on a real actor (the invoked turns provided as promises that never
 * settle, so nothing runs for real), every step is checked against the graph, and the
 * transitions taken (from `@xstate.microstep` inspection events) are compared with every
 * transition defined in the machine: the test fails below 100%.
 */
import { describe, expect, it } from 'vitest';
import {
  createActor,
  fromPromise,
  type AnyMachineSnapshot,
  type AnyStateNode,
  type AnyTransitionDefinition,
  type InspectionEvent,
} from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { REQUEST_TAG } from '../../src/blackboard/blackboard.js';
import { acceptedUserEvents, stateString } from '../../src/machines/refusals.js';
import type { SessionContext, SessionInput, TurnOutput } from '../../src/machines/session.context.js';
import { userEventTypes, type UserEvent, type UserEventType } from '../../src/machines/session.events.js';
import { sessionMachine, type SessionEvent } from '../../src/machines/session.machine.js';
import type { ModelReply, ToolCall } from '../../src/models/model.js';
import { packageInfo } from '../../src/runtime/runtime.js';
import { loadPackages } from '../../src/skills/index.js';

// ── the machine under test: turns that never settle ───────────────────────────

const never = fromPromise<TurnOutput, SessionContext>(() => new Promise<TurnOutput>(() => {}));
const machine = sessionMachine.provide({ actors: { managerTurn: never, workerTurn: never } });

const tiny = packageInfo(loadPackages().get('tiny')!);
const MAX_BURST = 2;

type Snap = AnyMachineSnapshot & { context: SessionContext };

// ── model replies ─────────────────────────────────────────────────────────────

function call(name: string, args: unknown, id = `call_${name}`): ToolCall {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}
const reply = (toolCalls: ToolCall[], content: string | null = null): ModelReply => ({ content, toolCalls });

/** Every kind of manager reply: valid loop and boundary tools, legacy forms, and each rule broken. */
const managerReplies: Record<string, ModelReply> = {
  read_blackboard: reply([call('read_blackboard', { tags: [REQUEST_TAG, 'note'] })]),
  list_workers: reply([call('list_workers', {})]),
  list_artifacts: reply([call('list_artifacts', {})]),
  run_worker_with_approval: reply([call('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true })]),
  run_worker_without_approval: reply([call('run_worker', { workerId: 'summarize', reason: 'Summarize the note.', requiresApproval: false })]),
  ask_user_with_questions: reply([call('ask_user', { message: 'A few questions first.', assessment: 'Looks fine.', questions: ['Which tone?', 'How long?'] })]),
  ask_user_message: reply([call('ask_user', { message: 'What next?' })]),
  review_blackboard: reply([call('review_blackboard', { message: 'Here is the board.' })]),
  finish: reply([call('finish', { summary: 'All done.' })]),
  plain_text: reply([], 'What should the note be about?'),
  legacy_json: reply([], JSON.stringify({ tool: 'run_worker', arguments: { workerId: 'echo', reason: 'legacy', requiresApproval: true } })),
  empty: reply([], null),
  malformed_json_args: reply([call('read_blackboard', '{"tags": [')]),
  schema_mismatch: reply([call('finish', { summary: 42 })]),
  unknown_tool: reply([call('fly_to_the_moon', {})]),
  worker_tool: reply([call('submit', { outputs: { note: 'hi' } })]),
  user_action: reply([call('approve', {})]),
  passes_input_tags: reply([call('run_worker', { workerId: 'echo', reason: 'x', requiresApproval: true, inputTags: ['request'] })]),
  unknown_worker: reply([call('run_worker', { workerId: 'ghost', reason: 'x', requiresApproval: false })]),
  unknown_role: reply([call('run_worker', { workerId: 'echo', reason: 'x', requiresApproval: false, roleId: 'critic' })]),
  two_boundaries: reply([call('ask_user', { message: 'first' }, 'call_b1'), call('finish', {}, 'call_b2')]),
  loop_then_boundary: reply([call('list_workers', {}, 'call_l1'), call('ask_user', { message: 'Listed.' }, 'call_l2')]),
};

/** Every kind of worker reply, per worker (a valid submit writes that worker's output tag). */
function workerRepliesFor(workerId: string): Record<string, ModelReply> {
  const tag = tiny.workers.find((w) => w.id === workerId)!.outputTags[0]!;
  return {
    submit: reply([call('submit', { outputs: { [tag]: `The ${tag}.` } })]),
    submit_and_ask: reply([call('submit', { outputs: { [tag]: 'v1' } }, 'call_s'), call('ask_user', { questions: ['Good enough?'] }, 'call_q')]),
    ask_only: reply([call('ask_user', { questions: ['What is the topic?'] })]),
    undeclared_tag: reply([call('submit', { outputs: { bogus: 'x' } })]),
    run_worker_by_worker: reply([call('run_worker', { workerId: 'echo', reason: 'x', requiresApproval: false })]),
    bad_args: reply([call('submit', '{"outputs": ')]),
    empty_outputs: reply([call('submit', { outputs: {} })]),
    double_submit: reply([call('submit', { outputs: { [tag]: 'one' } }, 'call_d1'), call('submit', { outputs: { [tag]: 'two' } }, 'call_d2')]),
    no_calls: reply([], 'Let me think about it.'),
    legacy_phase_a: reply([], JSON.stringify({ outputs: { [tag]: 'legacy body' }, askUser: ['Anything else?'] })),
  };
}
const workerReplies = Object.fromEntries(tiny.workers.map((w) => [w.id, workerRepliesFor(w.id)]));

/** Reply object → its catalogue name, for readable state keys and failure messages. */
const replyNames = new Map<ModelReply, string>([
  ...Object.entries(managerReplies).map(([name, r]) => [r, `manager:${name}`] as const),
  ...Object.entries(workerReplies).flatMap(([id, replies]) => Object.entries(replies).map(([name, r]) => [r, `${id}:${name}`] as const)),
]);
const modelFailure = new Error('model unreachable');

// ── events offered per state ──────────────────────────────────────────────────

const WRONG_ARTIFACT = 'a99';

/** Concrete payloads for a user event type (right and wrong artifact ids, unknown packages). */
function userEvents(type: UserEventType, context: SessionContext): UserEvent[] {
  const pending = context.artifacts.find((a) => a.status === 'pending_review')?.id;
  switch (type) {
    case 'user_selected_package': return [{ type, packageId: 'tiny' }, { type, packageId: 'no-such-package' }];
    case 'user_submitted_input': return [{ type, text: 'A short note about otters.' }];
    case 'user_confirmed_intake': return [{ type }];
    case 'user_approved_next_step': return [{ type }];
    case 'user_rejected_next_step': return [{ type, reason: 'Not now.' }];
    case 'user_accepted_artifact': return [...(pending ? [{ type, artifactId: pending }] : []), { type, artifactId: WRONG_ARTIFACT }];
    case 'user_rejected_artifact': return [...(pending ? [{ type, artifactId: pending, reason: 'Shorter.' }] : []), { type, artifactId: WRONG_ARTIFACT }];
    case 'user_answered_questions': return [{ type, answers: { q1: 'Cheerful.' } }];
    case 'user_skipped_questions': return [{ type }];
  }
}

function ownEventTypes(snapshot: Snap): Set<string> {
  return new Set((snapshot._nodes as AnyStateNode[]).flatMap((n) => n.ownEvents));
}

function offeredEvents(snapshot: Snap): SessionEvent[] {
  // A refused event ends its path: the rejection states are leaves of the graph.
  if (snapshot.status !== 'active' || snapshot.context.rejections.length > 0) return [];
  const context: SessionContext = snapshot.context;
  const own = ownEventTypes(snapshot);
  const events: SessionEvent[] = [];
  for (const type of own) {
    if (type === 'xstate.done.actor.managerTurn') {
      events.push(...Object.values(managerReplies).map((output) => ({ type: 'xstate.done.actor.managerTurn' as const, output })));
    } else if (type === 'xstate.done.actor.workerTurn') {
      events.push(...Object.values(workerReplies[context.step!.workerId]!).map((output) => ({ type: 'xstate.done.actor.workerTurn' as const, output })));
    } else if (type === 'xstate.error.actor.managerTurn' || type === 'xstate.error.actor.workerTurn') {
      events.push({ type, error: modelFailure });
    } else if ((userEventTypes as string[]).includes(type)) {
      events.push(...userEvents(type as UserEventType, context));
    }
  }
  // A few events that no active state declares: the root wildcard records them.
  const accepted = acceptedUserEvents(snapshot);
  const notAccepted = userEventTypes.find((t) => !accepted.includes(t));
  if (notAccepted && (snapshot.matches('waiting_user') || snapshot.matches({ running: { manager: 'thinking' } }))) {
    events.push(userEvents(notAccepted, context)[0]!);
  }
  return events;
}

// ── state keys ────────────────────────────────────────────────────────────────

function stateOf(snapshot: Snap): string {
  return snapshot.status === 'done' ? 'done' : stateString(snapshot.value);
}

/** The state value plus the context facts that change which transitions are enabled. */
function facts(snapshot: Snap): string {
  const c: SessionContext = snapshot.context;
  const state = stateOf(snapshot);
  const parts = [state, `confirmed=${c.intakeConfirmed}`, `card=${c.questions !== null}`, `refused=${c.rejections.length > 0}`];
  if (state.endsWith('.thinking')) parts.push(`burst=${c.burst}/${c.maxBurst}`);
  if (state === 'waiting_user.intake') parts.push(`request=${REQUEST_TAG in c.blackboard}`);
  if (state === 'waiting_user.review_artifact') parts.push(`pending=${c.artifacts.some((a) => a.status === 'pending_review')}`);
  if (state.startsWith('running.worker') || ['approve_step', 'worker_questions', 'revision'].some((s) => state.endsWith(s))) {
    parts.push(`step=${c.step?.workerId ?? '-'}`);
  }
  if (c.reply.boundary) parts.push(`boundary=${c.reply.boundary.tool}`);
  if (c.reply.queue.length) parts.push(`queue=${c.reply.queue.length}`);
  if (c.reply.workerChoice.outputs || c.reply.workerChoice.questions) parts.push('workerChoice');
  return parts.join(' ');
}

function eventLabel(event: SessionEvent | undefined): string {
  if (!event) return '(initial)';
  if ('output' in event) return `${event.type}[${replyNames.get(event.output) ?? '?'}]`;
  if (event.type.startsWith('xstate.')) return event.type;
  return JSON.stringify(event);
}

/**
 * Keyed by state facts + the event that led there + the state it came from, so that every
 * edge of the graph (not just every state) ends some shortest path.
 */
function serializeState(snapshot: Snap, event: SessionEvent | undefined, prev: Snap | undefined): string {
  return `${facts(snapshot)} <= ${prev ? stateOf(prev) : ''} / ${eventLabel(event)}`;
}

// ── the transitions the machine defines ───────────────────────────────────────

/** A guard's name: 'burstWithinLimit', 'not(actorMayUseTool)', … */
function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const inner = (guard as { guards?: unknown[] }).guards;
    return inner ? `${guard.name}(${inner.map(guardName).join(', ')})` : guard.name || 'inline';
  }
  return (guard as { type?: string } | undefined)?.type ?? '?';
}

function describeTransition(t: AnyTransitionDefinition): string {
  const guard = t.guard === undefined ? '' : ` [${guardName(t.guard)}]`;
  const targets = t.target?.map((n) => n.id).join(', ');
  return `${guard}${targets ? ` → ${targets}` : ''}`;
}

function definedTransitions(root: AnyStateNode): Map<AnyTransitionDefinition, string> {
  const all = new Map<AnyTransitionDefinition, string>();
  const visit = (node: AnyStateNode) => {
    for (const [eventType, list] of node.transitions) {
      list.forEach((t, i) => all.set(t, `${node.id} on ${eventType} #${i}${describeTransition(t)}`));
    }
    node.always?.forEach((t, i) => all.set(t, `${node.id} always #${i}${describeTransition(t)}`));
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(root);
  return all;
}

const defined = definedTransitions(machine.root);
const covered = new Set<string>();
const unknownTaken = new Set<string>();

function recordTransitions(e: InspectionEvent): void {
  if (e.type !== '@xstate.microstep') return;
  for (const t of e._transitions) {
    const id = defined.get(t);
    if (id) covered.add(id);
    else unknownTaken.add(`${t.source.id} on ${t.eventType}`);
  }
}

// ── replay ────────────────────────────────────────────────────────────────────

type Path = ReturnType<typeof pathsFor>[number];

function pathsFor(input: SessionInput, stopWhen?: (s: Snap) => boolean) {
  return getShortestPaths(machine, {
    input,
    events: (s) => offeredEvents(s as Snap),
    serializeState: (s, e, prev) => serializeState(s as Snap, e, prev as Snap | undefined),
    ...(stopWhen ? { stopWhen: (s) => stopWhen(s as Snap) } : {}),
  });
}

function replay(input: SessionInput, path: Path): void {
  const actor = createActor(machine, { input, inspect: recordTransitions }).start();
  try {
    const [first, ...rest] = path.steps;
    expect(facts(actor.getSnapshot() as Snap)).toBe(facts(first!.state as Snap));
    for (const step of rest) {
      const before = actor.getSnapshot() as Snap;
      actor.send(step.event);
      const after = actor.getSnapshot() as Snap;
      const where = `after ${eventLabel(step.event)} from ${stateOf(before)}`;
      expect(after.status, where).not.toBe('error');
      expect(facts(after), where).toBe(facts(step.state as Snap));
      if (after.context.rejections.length > before.context.rejections.length) {
        // A refused event changes nothing but the rejection log.
        expect(stateOf(after), where).toBe(stateOf(before));
        expect({ ...after.context, rejections: [] }, where).toEqual({ ...before.context, rejections: [] });
      }
    }
    const end = actor.getSnapshot() as Snap;
    expect(end.value).toEqual(path.state.value);
    expect(end.status).toBe(path.state.status);
    expect(facts(end)).toBe(facts(path.state as Snap));
  } finally {
    actor.stop();
  }
}

const withPackage: SessionInput = { sessionId: 'mbt-package', package: tiny, maxBurst: MAX_BURST };
const withCatalog: SessionInput = { sessionId: 'mbt-catalog', catalog: [tiny], maxBurst: MAX_BURST };

describe('session machine, model-based (xstate/graph shortest paths)', () => {
  const packagePaths = pathsFor(withPackage);
  // The legacy path only needs exploring until a package is chosen: from there on it is the
  // graph above.
  const catalogPaths = pathsFor(withCatalog, (s) => !s.matches({ waiting_user: 'skill_selection' }));

  it('offers actor results and user events, and reaches every waiting state and done', () => {
    const reached = new Set([...packagePaths, ...catalogPaths].map((p) => stateOf(p.state as Snap)));
    for (const state of [
      'waiting_user.skill_selection', 'waiting_user.intake', 'waiting_user.input', 'waiting_user.approve_step',
      'waiting_user.review_artifact', 'waiting_user.worker_questions', 'waiting_user.revision',
      'running.manager.thinking', 'running.worker.thinking', 'done',
    ]) {
      expect(reached, state).toContain(state);
    }
    expect(packagePaths.length).toBeGreaterThan(100);
  });

  it.each([
    ['with a package', withPackage, () => packagePaths],
    ['legacy, choosing from the catalog', withCatalog, () => catalogPaths],
  ] as const)('every shortest path replays on a real actor (%s)', (_name, input, paths) => {
    for (const path of paths()) replay(input, path);
  });

  it('covers every transition the machine defines', () => {
    const missing = [...defined.values()].filter((id) => !covered.has(id));
    console.log(
      `transitions covered: ${defined.size - missing.length}/${defined.size} ` +
      `(${packagePaths.length + catalogPaths.length} paths replayed)`,
    );
    expect(unknownTaken, 'transitions taken that the walk of machine.root did not find').toEqual(new Set());
    expect(missing, `transitions never taken:\n${missing.join('\n')}`).toEqual([]);
  });
});
