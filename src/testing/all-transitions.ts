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
  type AnyActorRef,
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
import type { PackageInfo, SessionContext, SessionInput } from '../core/machines/session.context.js';
import { userEventTypes, type UserEvent, type UserEventType } from '../core/machines/session.events.js';
import type { ModelReply } from '../core/models/model.js';
import {
  branchReplies,
  deadlineEventsFor,
  managerReplies,
  testingPackage,
  toolCallOutputs,
  userEventsFor,
  withTestingWaitTerms,
  workerReplies,
} from './catalogue.js';
import { nextToolCall } from '../core/machines/tool-calls.js';
import { branchActorId, branchesIn, itemOfActor, type Branch, type BranchStatus } from '../core/machines/team.js';
import { isToolWait, type ToolCallInput } from '../core/tools/server-tools.js';
import { pathTree, type PathNode } from './path-tree.js';

/** What an invoked actor may finish with: its output (a done event) or an error (an error event). */
export type ActorResult = { output: unknown; label?: string } | { error: unknown; label?: string };

/** The results of an actor while `snapshot` is the session's; `spawned`: an actor the machine spawned, its id and the input it was given. */
export type ActorResults = (snapshot: SessionSnapshot, spawned?: { id: string; input: unknown }) => ActorResult[];

export interface TestAllTransitionsOptions {
  /** The package sessions run with (default: the three-worker `testingPackage`). Its workers shape the replies. */
  package?: PackageInfo;
  /** LLM rounds per burst (default 2: small, so the burst limit is reached on short paths). */
  maxBurst?: number;
  /** Tokens per burst (default 1,000: the catalogue's costly replies use 700, so one leaves too little for the next); null: no budget. */
  maxBurstTokens?: number | null;
  /** Also walk the legacy start without a package, choosing it from a catalogue (default true). */
  legacyCatalog?: boolean;
  /**
   * Results offered while the actor with this invoke id runs — or, for an actor the machine
   * spawned (a state that takes `xstate.done.actor.*`), each actor of this source, told apart
   * by `spawned` (a fan-out's branch: `workerTurn`, given the session as that branch sees it).
   * Defaults exist for `managerTurn` and `workerTurn` (every kind of reply, plus a model
   * failure; a branch, one reply per way its reply is routed) and `toolCall`; an app that
   * invokes other actors names their results here.
   */
  actorResults?: Record<string, ActorResults>;
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
  /**
   * Covered transitions that the walk took only once a fan-out had been proposed on the path
   * (`context.team` set): a package whose workers can never run together leaves these uncovered.
   */
  onlyAfterFanOut: string[];
}

const modelFailure = new Error('model unreachable (offered by testAllTransitions)');

function stateOf(snapshot: SessionSnapshot): string {
  return snapshot.status === 'done' ? 'done' : stateString(snapshot.value);
}

/** One letter per branch status, for the facts. */
const BRANCH_CODES: Record<BranchStatus, string> = { proposed: 'p', approved: 'a', running: 'r', submitted: 's', asked: 'q', held: 'h' };

/**
 * A fan-out's branches for the facts: each one's status in the manager's order; once only held
 * branches are left (one goes on alone, as the session's worker), just that some are — the
 * edges that resume one read which comes next in the same macrostep, and more would only repeat
 * the resumed worker's states.
 */
function teamFacts(branches: readonly Branch[]): string {
  if (branches.every((b) => b.status === 'held' || b.status === 'asked')) return 'held';
  // A held branch's tool calls, by status: whether it goes on to a person's decision or to a run (and what that run needs) once resumed.
  // A running branch that replied before (its next round, `+`) is told apart from one on its first: the edge that starts a next round leads to a state of its own.
  const again = (b: Branch) => (b.status === 'running' && b.transcript.total > 0 ? '+' : '');
  const code = (b: Branch) => BRANCH_CODES[b.status] + again(b) + (b.reply?.toolCalls ? `(${b.reply.toolCalls.map((t) => t.status[0]).join('')})` : '');
  return branches.map(code).join('');
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
  const wait = state.split('.')[1];
  // A worker's side of the session (its rounds, its waits, a fan-out's team): the manager's guards
  // are not asked there, and which worker runs changes no edge (the replies fit each one; who
  // decides its waits is a fact of its own). One fact each keeps the worker's states from being
  // walked again for every worker and for each way the manager got there.
  const workerSide =
    state.startsWith('running.worker') || state.startsWith('running.team') || isToolWait(wait) || wait === 'worker_questions' || wait === 'revision';
  const parts = [state, ...(workerSide ? [] : [`confirmed=${c.intakeConfirmed}`]), `card=${c.questions !== null}`, `refused=${c.rejections.length > 0}`];
  // Each wait sets its own deadline and deciders as it opens: those of a closed wait, kept until then, change nothing.
  // Which notice (burst limit, token budget, a failure): two edges into the wait that shows it with different notices are different edges.
  if (c.notice && state === 'waiting_user.input') parts.push(`notice=${c.notice.slice(0, 12)}`);
  if (state.startsWith('waiting_user.')) {
    // Which rule of the open wait's deadline is current, and whether it names who decides.
    if (c.waits.deadline) parts.push(`deadline=${c.waits.deadline.level}`);
    if (c.waits.deciders) parts.push(`deciders=${c.waits.deciders.join(',')}`);
  }
  // A round starts (a branch's, in a fan-out): where the burst and the token budget stand. A burst
  // past its limit is as used up as one at it (the guards ask burst < maxBurst; a fan-out's rounds may pass it).
  if (state.endsWith('.thinking') || state === 'running.team.working')
    parts.push(`burst=${Math.min(c.burst, c.maxBurst)}/${c.maxBurst}`, `tokensOver=${ruleById.burstTokensWithinBudget.check(c, 'manager') !== null}`);
  // A fan-out: each branch's status, in the manager's order (which items wait, which run, which
  // artifact is the last under review, which held branch goes on first).
  if (c.team) parts.push(`team=${teamFacts(c.team.branches)}`);
  if (state === 'waiting_user.intake') parts.push(`request=${REQUEST_TAG in c.blackboard}`);
  if (state === 'waiting_user.review_artifact') parts.push(`pending=${c.artifacts.some((a) => a.status === 'pending_review')}`);
  if (workerSide || wait === 'approve_step') parts.push(`step=${c.step ? 'yes' : '-'}`);
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
 * The machine as the walk steps it, with an exception of the chart (an action or a guard that
 * throws) told as a TransitionTestError naming the state and the event (`where`), instead of
 * from deep inside the graph traversal.
 */
function telling(machine: AnyStateMachine, where: (s: SessionSnapshot, e: EventObject) => string): AnyStateMachine {
  const stepped = Object.create(machine) as AnyStateMachine;
  stepped.transition = (snapshot, event, scope) => {
    try {
      return machine.transition(snapshot, event, scope);
    } catch (error) {
      throw new TransitionTestError(`${where(snapshot as SessionSnapshot, event)} the machine threw: ${String(error)}`);
    }
  };
  return stepped;
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
  const branchCatalogues = new Map(pkg.workers.map((w) => [w.id, Object.entries(branchReplies(pkg, w.id))]));
  const fromReplies = (list: [string, ModelReply][]): ActorResult[] => [
    ...list.map(([label, output]) => ({ output, label })),
    { error: modelFailure, label: 'model failure' },
  ];
  const actorResults: Record<string, ActorResults> = {
    toolCall: (snapshot) => [
      ...Object.entries(toolCallOutputs(nextToolCall(snapshot.context))).map(([label, output]) => ({ output, label })),
      { error: new Error('the tool host threw (offered by testAllTransitions)'), label: 'actor failure' },
    ],
    managerTurn: () => fromReplies(managerCatalogue),
    // A fan-out's branch is given the session as the branch sees it (its step).
    workerTurn: (snapshot, spawned) => {
      const workerId = ((spawned?.input as SessionContext | undefined) ?? snapshot.context).step?.workerId;
      const replies = workerId === undefined ? undefined : (spawned ? branchCatalogues : workerCatalogues).get(workerId);
      if (!replies) throw new TransitionTestError(`a worker turn runs for "${workerId}", which is not a worker of package "${pkg.id}".`);
      return fromReplies(replies);
    },
    ...options.actorResults,
  };

  const resultsFor = (id: string, snapshot: SessionSnapshot, spawned?: { id: string; input: unknown }): ActorResult[] => {
    const results = actorResults[id];
    if (!results) throw new TransitionTestError(`the machine invokes "${id}", and no results are known for it: pass actorResults.${id} to testAllTransitions.`);
    return results(snapshot, spawned);
  };
  /** The actors the machine spawned whose id starts with `prefix` (those invoked have events of their own): each one's results, by its source. */
  const spawnedMatching = (snapshot: SessionSnapshot, prefix: string, own: Set<string>) =>
    Object.entries(snapshot.children as Record<string, AnyActorRef | undefined>)
      .filter(([id, child]) => child && id.startsWith(prefix) && !own.has(`xstate.done.actor.${id}`) && !own.has(`xstate.error.actor.${id}`))
      .map(([id, child]) => {
        const src = typeof child!.src === 'string' ? child!.src : id;
        return { id, results: () => resultsFor(src, snapshot, { id, input: (child!.getSnapshot() as { input?: unknown }).input }) };
      });
  /** The done or error events of actor `id` (as XState sends them: with `actorId`), one per result of that kind. */
  const actorEvents = (kind: 'done' | 'error', id: string, results: ActorResult[]): EventObject[] => {
    const type = `xstate.${kind}.actor.${id}`;
    return results.flatMap((result): EventObject[] => {
      if (kind === 'done' && 'output' in result) {
        const event = { type, output: result.output, actorId: id };
        labels.set(event, `${type}[${result.label ?? '?'}]`);
        return [event];
      }
      return kind === 'error' && 'error' in result ? [{ type, error: result.error, actorId: id } as EventObject] : [];
    });
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
        const kind = actor[1] as 'done' | 'error';
        const id = actor[2]!; // both groups always match
        // A partial wildcard (`xstate.done.actor.*`): the results of each spawned actor it matches.
        const finishing = id.endsWith('*') ? spawnedMatching(snapshot, id.slice(0, -1), own) : [{ id, results: () => resultsFor(id, snapshot) }];
        for (const child of finishing) {
          if (!resultsOf.has(child.id)) resultsOf.set(child.id, child.results());
          events.push(...actorEvents(kind, child.id, resultsOf.get(child.id)!));
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
  // Taken on a path before any fan-out was proposed on it (the rest needs a package whose workers can run together).
  const coveredBeforeFanOut = new Set<string>();
  const unknownTaken = new Set<string>();
  let fannedOut = false;
  const record = (e: InspectionEvent) => {
    if (e.type !== '@xstate.microstep') return;
    // The snapshot after the microstep: the transition that proposes a fan-out counts as one of it.
    fannedOut ||= (e.snapshot as SessionSnapshot).context?.team != null;
    for (const t of e._transitions) {
      const id = defined.get(t);
      if (!id) unknownTaken.add(`${t.source.id} on ${t.eventType}`);
      else {
        covered.add(id);
        if (!fannedOut) coveredBeforeFanOut.add(id);
      }
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
      found = getShortestPaths(
        telling(walked, (s, e) => `from "${facts(s)}" on ${label(e)}`),
        {
          input,
          events: offered,
          // Keyed by facts + the event that led there + the state it came from, so that every
          // edge of the graph (not just every state) ends some shortest path.
          serializeState: (s, e, prev) => `${facts(s)} <= ${prev ? stateOf(prev) : ''} / ${label(e)}`,
          limit: options.limit ?? 200_000,
          ...(stopWhen ? { stopWhen } : {}),
        },
      );
    } catch (error) {
      if (error instanceof Error && error.message === 'Traversal limit exceeded') {
        throw new TransitionTestError(
          `the walk explored more than ${options.limit ?? 200_000} states: the facts function tells too many ` +
            `states apart (or the machine grows without bound). Make facts coarser.`,
        );
      }
      throw error;
    }
    paths.push(...replayTree(walked, input, found, { facts, label, record, fannedOut: () => fannedOut, setFannedOut: (f) => (fannedOut = f) }));
  }

  if (unknownTaken.size) {
    throw new TransitionTestError(`transitions were taken that the walk of machine.root did not find: ${[...unknownTaken].join('; ')}.`);
  }
  const uncovered = [...defined.values()].filter((id) => !covered.has(id));
  const onlyAfterFanOut = [...defined.values()].filter((id) => covered.has(id) && !coveredBeforeFanOut.has(id));
  return { covered: defined.size - uncovered.length, total: defined.size, uncovered, paths, onlyAfterFanOut };
}

interface ReplayTools {
  facts: (s: SessionSnapshot) => string;
  label: (e: EventObject | undefined) => string;
  record: (e: InspectionEvent) => void;
  /** Whether a fan-out was proposed on the path so far (what `record` reads and sets). */
  fannedOut: () => boolean;
  setFannedOut: (fannedOut: boolean) => void;
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
  // The calls of the reply, and of a fan-out's held branches (one may go on alone as the deadline's edge leaves).
  const callsOf = ({ context }: SessionSnapshot) => [context.reply, ...(context.team?.branches ?? []).map((b) => b.reply)].flatMap((r) => r?.toolCalls ?? []);
  const approvedBefore = new Set(
    callsOf(before)
      .filter((c) => c.status === 'approved')
      .map((c) => c.callId),
  );
  const approvedNow = callsOf(after).find((c) => c.status === 'approved' && !approvedBefore.has(c.callId));
  if (approvedNow) return `${event.type} approved call ${approvedNow.callId} without a person.`;
  // A fan-out's steps: one that waited for a person is rejected (it leaves the team), never started.
  const waited = new Set(branchesIn(before.context, 'proposed').map((b) => b.item));
  const started = after.context.team?.branches.find((b) => waited.has(b.item) && b.status !== 'proposed');
  return started ? `${event.type} approved step ${started.item} of the fan-out without a person (it is ${started.status}).` : null;
}

/**
 * Rule 6 and the token budget: a manager's or a worker's model round starts only while the burst
 * is below maxBurst and the next call fits the budget; else the session waits for the user.
 * Null when that holds (or no such round starts).
 */
function roundPastBurst(snapshot: SessionSnapshot): string | null {
  const state = stateOf(snapshot);
  if (state !== 'running.manager.thinking' && state !== 'running.worker.thinking') return null;
  const c = snapshot.context;
  if (c.burst >= c.maxBurst) return `a model round started in ${state} with the burst used up (${c.burst}/${c.maxBurst}).`;
  return ruleById.burstTokensWithinBudget.check(c, 'manager') ? `a model round started in ${state} over the burst's token budget.` : null;
}

/**
 * A fan-out never loses a branch: a branch that runs has its model round under way (the actor
 * `branch:<item>`) and every such actor is a running branch's; the team works while, and only
 * while, a branch runs; a step waits (or, approved, waits for the others) only in approve_step,
 * an artifact only for the fan-in and its review; no branch stays focused after its reply was checked; and the
 * manager's next round (or the end) comes only once no branch is left. Null when that holds.
 *
 * @example
 * expect(lostBranch(actor.getSnapshot())).toBeNull();
 */
export function lostBranch(snapshot: SessionSnapshot): string | null {
  const branches = snapshot.context.team?.branches ?? [];
  const state = stateOf(snapshot);
  const children = snapshot.children as Record<string, AnyActorRef | undefined>;
  const running = branches.filter((b) => b.status === 'running');
  const idle = running.find((b) => !children[branchActorId(b.item)]);
  if (idle) return `branch ${idle.item} runs, yet no actor runs its round.`;
  const orphan = Object.keys(children).find((id) => children[id] && itemOfActor(id) !== undefined && !running.some((b) => branchActorId(b.item) === id));
  if (orphan) return `the actor ${orphan} runs a round for no running branch.`;
  if (running.length > 0 && state !== 'running.team.working') return `${running.length} branch(es) run while the session is in ${state}.`;
  if (running.length === 0 && state === 'running.team.working') return 'the team works with no branch running: nothing will ever end the state.';
  // A step waits, or was approved and waits for the others to be decided; an artifact waits for its review (the fan-in).
  const allowed: Partial<Record<BranchStatus, string[]>> = {
    proposed: ['waiting_user.approve_step'],
    approved: ['waiting_user.approve_step'],
    submitted: ['running.team.working', 'waiting_user.review_artifact'],
  };
  const misplaced = branches.find((b) => allowed[b.status] && !allowed[b.status]!.includes(state));
  if (misplaced) return `branch ${misplaced.item} is ${misplaced.status} while the session is in ${state}.`;
  if (state === 'waiting_user.approve_step' && branches.length > 0 && !branches.some((b) => b.status === 'proposed'))
    return 'the fan-out waits for a decision on no step.';
  if (snapshot.context.team?.focus) return `branch ${snapshot.context.team.focus.item} is still focused after its reply was checked.`;
  if (branches.length > 0 && (state === 'running.manager.thinking' || state === 'done'))
    return `${state === 'done' ? 'the session ended' : 'the manager goes on'} with branch(es) ${branches.map((b) => `${b.item} (${b.status})`).join(', ')} left over.`;
  return null;
}

/** JSON of a context without its rejection log (a refused event may change only that). */
function withoutRejections(snapshot: SessionSnapshot): string {
  return JSON.stringify({ ...snapshot.context, rejections: [] });
}

/**
 * Replays the walk's paths on real actors, each edge of their tree once: a path goes on from
 * where its parent path ended, on the actor that got there, or on a copy of it (restored from
 * its persisted snapshot) where paths part. A chart whose actors cannot be persisted (inline
 * logic) gets its copy by a replay from the start instead. Every step of every path is checked
 * as it is taken, and where each path ends.
 */
function replayTree(
  machine: AnyStateMachine,
  input: SessionInput,
  found: { state: SessionSnapshot; steps: { state: SessionSnapshot; event: EventObject }[] }[],
  tools: ReplayTools,
): TransitionPath[] {
  const { facts, label, record } = tools;
  const root = pathTree(found);
  if (!root) return [];
  const results: TransitionPath[] = [];
  const where = (events: string[], at: string) => `path ${['(initial)', ...events].join(' → ')}: ${at}`;
  const fresh = () => createActor(machine, { input, inspect: record }).start();
  const copyOf = (actor: AnyActorRef, events: EventObject[]): AnyActorRef => {
    let persisted: unknown;
    try {
      persisted = actor.getPersistedSnapshot();
    } catch {
      // Inline logic cannot be persisted: the same events from the start get there too (each was checked as it was first taken).
      const again = fresh();
      for (const event of events) again.send(event);
      return again;
    }
    return createActor(machine, { input, snapshot: persisted as SessionSnapshot, inspect: record }).start();
  };

  const visit = (node: PathNode<SessionSnapshot>, actor: AnyActorRef, sent: EventObject[]): void => {
    const events = sent.map(label);
    for (const end of node.ends) {
      const last = actor.getSnapshot() as SessionSnapshot;
      const want = found[end]!.state;
      if (last.status !== want.status || facts(last) !== facts(want)) {
        throw new TransitionTestError(where(events, `the actor ends in "${facts(last)}" (${last.status}), the walk in "${facts(want)}" (${want.status}).`));
      }
      results[end] = { state: stateOf(last), events };
    }
    const fannedOut = tools.fannedOut();
    node.children.forEach((child, i) => {
      // The last child goes on with this actor, once the others have their copies of it.
      const own = i === node.children.length - 1;
      const runner = own ? actor : copyOf(actor, sent);
      try {
        tools.setFannedOut(fannedOut);
        step(runner, child.step, events);
        visit(child, runner, [...sent, child.step.event]);
      } finally {
        if (!own) runner.stop();
      }
    });
  };

  const step = (actor: AnyActorRef, { state, event }: { state: SessionSnapshot; event: EventObject }, events: string[]): void => {
    const before = actor.getSnapshot() as SessionSnapshot;
    actor.send(event);
    const after = actor.getSnapshot() as SessionSnapshot;
    const fail = (why: string) => new TransitionTestError(where([...events, label(event)], `after ${label(event)} from ${stateOf(before)} ${why}`));
    if (after.status === 'error') throw fail(`the actor failed: ${String(after.error)}`);
    if (facts(after) !== facts(state)) throw fail(`the actor is in "${facts(after)}", the walk in "${facts(state)}".`);
    const broken = unapprovedToolCall(after) ?? approvedWithoutPerson(before, event, after) ?? lostBranch(after) ?? roundPastBurst(after);
    if (broken) throw fail(broken);
    const refused = after.context.rejections.length > before.context.rejections.length;
    if (refused && (stateOf(after) !== stateOf(before) || withoutRejections(after) !== withoutRejections(before))) {
      throw fail('the event was refused, yet the state or context changed beyond the rejection log.');
    }
  };

  tools.setFannedOut(false);
  const actor = fresh();
  try {
    const started = actor.getSnapshot() as SessionSnapshot;
    if (facts(started) !== facts(root.step.state)) {
      throw new TransitionTestError(where([], `the actor starts in "${facts(started)}", the walk in "${facts(root.step.state)}".`));
    }
    visit(root, actor, []);
  } finally {
    actor.stop();
  }
  return results;
}
