/**
 * `testAllTransitions`: a model-based test of a session machine — Steward's own or an app's
 * `sessionMachine.provide(...)` — in one call.
 *
 * `getShortestPaths` from `xstate/graph` walks the machine. Per state it offers what that
 * state can take: the user events its active state nodes declare (`ownEvents`: the root
 * wildcard makes `snapshot.can()` true for everything), a few refused events (so the
 * wildcard rejection transition runs), and, while an invoked actor runs, its results as
 * `xstate.done.actor.<id>` / `xstate.error.actor.<id>` events from a catalogue of model
 * replies. Each path is then replayed on a real actor whose invoked actors never settle (so
 * nothing runs for real, no model is called), every step is checked against the graph, and
 * the transitions taken (`@xstate.microstep` inspection events) are compared with every
 * transition the machine defines. After every step, the call an invoked `toolCall` actor was
 * given must be an approved one, as approved (`unapprovedToolCall`): deny never executes.
 *
 * @example
 * import { sessionMachine } from 'steward/machine';
 * import { testAllTransitions } from 'steward/testing';
 *
 * const result = testAllTransitions(sessionMachine.provide({ guards: { ... } }));
 * expect(result.uncovered).toEqual([]); // result.covered / result.total transitions
 */
import {
  createActor,
  fromCallback,
  type AnyStateMachine,
  type AnyStateNode,
  type AnyTransitionDefinition,
  type EventObject,
  type InspectionEvent,
} from 'xstate';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import { getShortestPaths } from 'xstate/graph';
import { REQUEST_TAG } from '../core/blackboard/blackboard.js';
import { TransitionTestError } from '../core/errors.js';
import { acceptedUserEvents, activeNodes, stateString } from '../core/machines/refusals.js';
import { ruleById } from '../core/machines/rules.js';
import type { PackageInfo, SessionInput } from '../core/machines/session.context.js';
import { userEventTypes, type UserEvent, type UserEventType } from '../core/machines/session.events.js';
import type { ModelReply } from '../core/models/model.js';
import { deadlineEventsFor, managerReplies, testingPackage, toolCallOutputs, userEventsFor, withTestingWaitTerms, workerReplies } from './catalogue.js';
import { nextToolCall } from '../core/machines/tool-calls.js';
import { isToolWait, type ToolCallInput } from '../core/tools/server-tools.js';

/** What an invoked actor may finish with: its output (a done event) or an error (an error event). */
export type ActorResult = { output: unknown; label?: string } | { error: unknown; label?: string };

export interface TestAllTransitionsOptions {
  /** The package sessions run with (default: a two-worker test package). Its workers shape the replies. */
  package?: PackageInfo;
  /** LLM rounds per burst (default 2: small, so the burst limit is reached on short paths). */
  maxBurst?: number;
  /** Tokens per burst (default 1,000: the catalogue's costly replies use 700, so one leaves too little for the next); null: no budget. */
  maxBurstTokens?: number | null;
  /** Also walk the legacy start without a package, choosing it from a catalogue (default true). */
  legacyCatalog?: boolean;
  /**
   * Results offered while the actor with this invoke id runs. Defaults exist for
   * `managerTurn` and `workerTurn` (every kind of reply, plus a model failure); an app that
   * invokes other actors names their results here.
   */
  actorResults?: Record<string, (snapshot: SessionSnapshot) => ActorResult[]>;
  /** Payloads for each user event type (default: right and wrong ids, unknown packages). */
  userEvents?: (type: UserEventType, snapshot: SessionSnapshot) => UserEvent[];
  /**
   * The state value plus the context facts that change which transitions are enabled. Two
   * snapshots with the same facts count as one state; override it when an app's guards read
   * other context.
   */
  facts?: (snapshot: SessionSnapshot) => string;
  /** Stop with an error after this many states explored (default 200,000): facts too fine-grained never end. */
  limit?: number;
}

export interface TransitionPath {
  /** Where the path ends. */
  state: string;
  /** The events sent, as labels (`user_submitted_input`, `xstate.done.actor.managerTurn[finish]`, …). */
  events: string[];
}

export interface TestAllTransitionsResult {
  /** Transitions the machine defines that some replayed path took. */
  covered: number;
  total: number;
  /** The transitions never taken, as `stateId on eventType #index [guard] → target`. */
  uncovered: string[];
  /** Every shortest path that was replayed on a real actor. */
  paths: TransitionPath[];
}

const modelFailure = new Error('model unreachable (offered by testAllTransitions)');

function stateOf(snapshot: SessionSnapshot): string {
  return snapshot.status === 'done' ? 'done' : stateString(snapshot.value);
}

/**
 * The default facts: what Steward's guards read.
 *
 * @example
 * testAllTransitions(machine, { facts: (snapshot) => `${sessionFacts(snapshot)} ${snapshot.context.myFlag}` });
 */
export function sessionFacts(snapshot: SessionSnapshot): string {
  const c = snapshot.context;
  const state = stateOf(snapshot);
  const parts = [state, `confirmed=${c.intakeConfirmed}`, `card=${c.questions !== null}`, `refused=${c.rejections.length > 0}`];
  // Which notice (burst limit, token budget, a failure): two edges into the same state with different notices are different edges.
  if (c.notice) parts.push(`notice=${c.notice.slice(0, 12)}`);
  // Which rule of the open wait's deadline is current, and whether it names who decides.
  if (c.waits.deadline) parts.push(`deadline=${c.waits.deadline.level}`);
  if (c.waits.deciders) parts.push(`deciders=${c.waits.deciders.join(',')}`);
  if (state.endsWith('.thinking')) parts.push(`burst=${c.burst}/${c.maxBurst}`, `tokensOver=${ruleById.burstTokensWithinBudget.check(c, 'manager') !== null}`);
  if (state === 'waiting_user.intake') parts.push(`request=${REQUEST_TAG in c.blackboard}`);
  if (state === 'waiting_user.review_artifact') parts.push(`pending=${c.artifacts.some((a) => a.status === 'pending_review')}`);
  if (
    state.startsWith('running.worker') ||
    ['approve_step', 'worker_questions', 'revision'].some((s) => state.endsWith(s)) ||
    isToolWait(state.split('.')[1])
  ) {
    parts.push(`step=${c.step?.workerId ?? '-'}`);
  }
  if (c.reply.boundary) parts.push(`boundary=${c.reply.boundary.tool}`);
  if (c.reply.queue.length) parts.push(`queue=${c.reply.queue.length}`);
  if (c.reply.workerChoice.outputs || c.reply.workerChoice.questions) parts.push('workerChoice');
  // The MCP tool calls of the reply, by status (which wait, which call runs next, what is left).
  if (c.reply.toolCalls?.length) parts.push(`toolCalls=${c.reply.toolCalls.map((t) => t.status[0]).join('')}`);
  return parts.join(' ');
}

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

/** Every transition the machine defines (event, wildcard and eventless), with a readable id. */
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

/**
 * The same machine with every actor it may invoke replaced by one that never settles: a callback
 * actor that sends nothing (a promise actor would make an AbortController for every invoke the
 * walk enters, and a DOMException with a stack trace at every stop).
 */
function withInertActors(machine: AnyStateMachine): AnyStateMachine {
  const never = fromCallback(() => {});
  const names = Object.keys(machine.implementations.actors ?? {});
  return machine.provide({ actors: Object.fromEntries(names.map((n) => [n, never])) });
}

/**
 * Walks `machine` (default: Steward's `sessionMachine`, passed by the entry point) along
 * every shortest path, replays each on a real actor, and reports the transition coverage.
 * Throws a TransitionTestError when a replay disagrees with the walk.
 */
export function testAllTransitions(machine: AnyStateMachine, options: TestAllTransitionsOptions = {}): TestAllTransitionsResult {
  const pkg = withTestingWaitTerms(options.package ?? testingPackage);
  const maxBurst = options.maxBurst ?? 2;
  const maxBurstTokens = options.maxBurstTokens === undefined ? 1000 : options.maxBurstTokens;
  const facts = options.facts ?? sessionFacts;
  const userEvents = options.userEvents ?? ((type, snapshot) => userEventsFor(type, snapshot, pkg));
  const managerCatalogue = Object.entries(managerReplies(pkg));
  const workerCatalogues = new Map(pkg.workers.map((w) => [w.id, Object.entries(workerReplies(pkg, w.id))]));
  const fromReplies = (list: [string, ModelReply][]): ActorResult[] => [
    ...list.map(([label, output]) => ({ output, label })),
    { error: modelFailure, label: 'model failure' },
  ];
  const actorResults: Record<string, (snapshot: SessionSnapshot) => ActorResult[]> = {
    toolCall: (snapshot) => [
      ...Object.entries(toolCallOutputs(nextToolCall(snapshot.context))).map(([label, output]) => ({ output, label })),
      { error: new Error('the tool host threw (offered by testAllTransitions)'), label: 'actor failure' },
    ],
    managerTurn: () => fromReplies(managerCatalogue),
    workerTurn: (snapshot) => {
      const workerId = snapshot.context.step?.workerId;
      const replies = workerId === undefined ? undefined : workerCatalogues.get(workerId);
      if (!replies) throw new TransitionTestError(`a worker turn runs for "${workerId}", which is not a worker of package "${pkg.id}".`);
      return fromReplies(replies);
    },
    ...options.actorResults,
  };

  const labels = new WeakMap<EventObject, string>();
  const label = (event: EventObject | undefined): string => {
    if (!event) return '(initial)';
    return labels.get(event) ?? (event.type.startsWith('xstate.') ? event.type : JSON.stringify(event));
  };

  const offered = (snapshot: SessionSnapshot): EventObject[] => {
    // A refused event ends its path: the rejection states are leaves of the graph.
    if (snapshot.status !== 'active' || snapshot.context.rejections.length > 0) return [];
    const own = new Set(activeNodes(snapshot.machine, snapshot.value).flatMap((n) => n.ownEvents));
    const events: EventObject[] = [];
    const resultsOf = new Map<string, ActorResult[]>();
    for (const type of own) {
      const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
      if (actor) {
        const kind = actor[1];
        const id = actor[2]!; // both groups always match
        const results = actorResults[id];
        if (!results)
          throw new TransitionTestError(`the machine invokes "${id}", and no results are known for it: pass actorResults.${id} to testAllTransitions.`);
        if (!resultsOf.has(id)) resultsOf.set(id, results(snapshot));
        for (const result of resultsOf.get(id)!) {
          if (kind === 'done' && 'output' in result) {
            const event = { type, output: result.output };
            labels.set(event, `${type}[${result.label ?? '?'}]`);
            events.push(event);
          } else if (kind === 'error' && 'error' in result) {
            events.push({ type, error: result.error } as EventObject);
          }
        }
      } else if ((userEventTypes as string[]).includes(type)) {
        events.push(...userEvents(type as UserEventType, snapshot));
      } else if (type === 'deadline_passed') {
        events.push(...deadlineEventsFor(snapshot));
      } else if (type === 'package_upgraded' && snapshot.context.package) {
        // The runtime's `steward upgrade`: the same package as another version.
        const to = `sha256:${'0'.repeat(64)}`;
        const event = { type, package: { ...snapshot.context.package, version: to }, from: snapshot.context.package.version ?? null, to };
        labels.set(event, 'package_upgraded');
        events.push(event);
      }
    }
    // One event that no active state declares, where a user would send it: the root wildcard records it.
    const accepted = acceptedUserEvents(snapshot);
    const notAccepted = userEventTypes.find((t) => !accepted.includes(t));
    if (notAccepted && (snapshot.matches('waiting_user') || snapshot.matches({ running: { manager: 'thinking' } }))) {
      const [event] = userEvents(notAccepted, snapshot);
      if (event) events.push(event);
    }
    return events;
  };

  const walked = withInertActors(machine);
  const defined = definedTransitions(walked.root);
  const covered = new Set<string>();
  const unknownTaken = new Set<string>();
  const record = (e: InspectionEvent) => {
    if (e.type !== '@xstate.microstep') return;
    for (const t of e._transitions) {
      const id = defined.get(t);
      if (id) covered.add(id);
      else unknownTaken.add(`${t.source.id} on ${t.eventType}`);
    }
  };

  const runs: { input: SessionInput; stopWhen?: (s: SessionSnapshot) => boolean }[] = [
    { input: { sessionId: 'all-transitions', package: pkg, maxBurst, maxBurstTokens } },
  ];
  // The legacy start only needs walking until a package is chosen: from there on it is the graph above.
  if (options.legacyCatalog ?? true) {
    runs.push({
      input: { sessionId: 'all-transitions-catalog', catalog: [pkg], maxBurst, maxBurstTokens },
      stopWhen: (s) => !s.matches({ waiting_user: 'skill_selection' }),
    });
  }

  const paths: TransitionPath[] = [];
  for (const { input, stopWhen } of runs) {
    let found;
    try {
      found = getShortestPaths(walked, {
        input,
        events: offered,
        // Keyed by facts + the event that led there + the state it came from, so that every
        // edge of the graph (not just every state) ends some shortest path.
        serializeState: (s, e, prev) => `${facts(s)} <= ${prev ? stateOf(prev) : ''} / ${label(e)}`,
        limit: options.limit ?? 200_000,
        ...(stopWhen ? { stopWhen } : {}),
      });
    } catch (error) {
      if (error instanceof Error && error.message === 'Traversal limit exceeded') {
        throw new TransitionTestError(
          `the walk explored more than ${options.limit ?? 200_000} states: the facts function tells too many ` +
            `states apart (or the machine grows without bound). Make facts coarser.`,
        );
      }
      throw error;
    }
    for (const path of found) {
      paths.push(replay(walked, input, path.steps, path.state, { facts, label, record }));
    }
  }

  if (unknownTaken.size) {
    throw new TransitionTestError(`transitions were taken that the walk of machine.root did not find: ${[...unknownTaken].join('; ')}.`);
  }
  const uncovered = [...defined.values()].filter((id) => !covered.has(id));
  return { covered: defined.size - uncovered.length, total: defined.size, uncovered, paths };
}

interface ReplayTools {
  facts: (s: SessionSnapshot) => string;
  label: (e: EventObject | undefined) => string;
  record: (e: InspectionEvent) => void;
}

/**
 * Deny never executes: the call an invoked `toolCall` actor was given is an approved call of
 * the reply, with the arguments it was approved with, for the definition it was approved for.
 * Null when that holds (or no call runs).
 */
export function unapprovedToolCall(snapshot: SessionSnapshot): string | null {
  const child = (snapshot.children as Record<string, { getSnapshot(): { input?: unknown } } | undefined>).toolCall;
  if (!child) return null;
  const input = child.getSnapshot().input as ToolCallInput | undefined;
  const item = snapshot.context.reply.toolCalls?.find((c) => c.callId === input?.item.callId);
  if (!input || !item) return `the toolCall actor runs a call that is not in the reply (${JSON.stringify(input?.item.callId)}).`;
  if (item.status !== 'approved') return `the toolCall actor runs call ${item.callId}, which is ${item.status}, not approved.`;
  if (JSON.stringify(input.item.arguments) !== JSON.stringify(item.arguments))
    return `the toolCall actor runs call ${item.callId} with other arguments than approved.`;
  if (input.pinned.digest !== item.digest) return `the toolCall actor runs call ${item.callId} for another definition than approved.`;
  return null;
}

/**
 * An approval is a person's: a deadline never approves a step or a tool call (an expired
 * approval is a rejection). Null when the event approved nothing it should not have.
 */
function approvedWithoutPerson(before: SessionSnapshot, event: EventObject, after: SessionSnapshot): string | null {
  if (event.type !== 'deadline_passed') return null;
  if (before.matches({ waiting_user: 'approve_step' }) && after.matches({ running: 'worker' }))
    return `${event.type} started the proposed step without a person's approval.`;
  const approvedBefore = new Set((before.context.reply.toolCalls ?? []).filter((c) => c.status === 'approved').map((c) => c.callId));
  const approvedNow = (after.context.reply.toolCalls ?? []).find((c) => c.status === 'approved' && !approvedBefore.has(c.callId));
  return approvedNow ? `${event.type} approved call ${approvedNow.callId} without a person.` : null;
}

/** JSON of a context without its rejection log (a refused event may change only that). */
function withoutRejections(snapshot: SessionSnapshot): string {
  return JSON.stringify({ ...snapshot.context, rejections: [] });
}

function replay(
  machine: AnyStateMachine,
  input: SessionInput,
  steps: { state: SessionSnapshot; event: EventObject }[],
  end: SessionSnapshot,
  { facts, label, record }: ReplayTools,
): TransitionPath {
  const events = steps.slice(1).map((s) => label(s.event));
  const where = (at: string) => `path ${['(initial)', ...events].join(' → ')}: ${at}`;
  const actor = createActor(machine, { input, inspect: record }).start();
  try {
    const [first, ...rest] = steps;
    if (first && facts(actor.getSnapshot()) !== facts(first.state)) {
      throw new TransitionTestError(where(`the actor starts in "${facts(actor.getSnapshot())}", the walk in "${facts(first.state)}".`));
    }
    for (const step of rest) {
      const before = actor.getSnapshot();
      actor.send(step.event);
      const after = actor.getSnapshot();
      const at = `after ${label(step.event)} from ${stateOf(before)}`;
      if (after.status === 'error') throw new TransitionTestError(where(`${at} the actor failed: ${String(after.error)}`));
      if (facts(after) !== facts(step.state))
        throw new TransitionTestError(where(`${at} the actor is in "${facts(after)}", the walk in "${facts(step.state)}".`));
      const unapproved = unapprovedToolCall(after) ?? approvedWithoutPerson(before, step.event, after);
      if (unapproved) throw new TransitionTestError(where(`${at} ${unapproved}`));
      const refused = after.context.rejections.length > before.context.rejections.length;
      if (refused && (stateOf(after) !== stateOf(before) || withoutRejections(after) !== withoutRejections(before))) {
        throw new TransitionTestError(where(`${at} the event was refused, yet the state or context changed beyond the rejection log.`));
      }
    }
    const last = actor.getSnapshot();
    if (last.status !== end.status || facts(last) !== facts(end)) {
      throw new TransitionTestError(where(`the actor ends in "${facts(last)}" (${last.status}), the walk in "${facts(end)}" (${end.status}).`));
    }
    return { state: stateOf(last), events };
  } finally {
    actor.stop();
  }
}
