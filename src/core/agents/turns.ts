/**
 * The manager and worker turns: the actors the session machine invokes for one LLM round.
 * Each assembles its prompt from the session context and calls the model; the machine then
 * checks the reply's tool calls. Create them here and hand them to `sessionMachine.provide()`.
 *
 * I/O belongs here, not in transitions: when the manager's reply reads a tag version whose
 * body left the context (`read_blackboard` with `version`, or the request, whose earlier
 * parts are archived), the turn fetches it from the session's archive and attaches it to its
 * output, so the loop tool that runs in the machine stays a pure function of the context and
 * the event (and replays from the journal). A worker's turn fetches the request's earlier
 * parts before it builds the worker's brief.
 */
import { fromPromise } from 'xstate';
import { archivedVersions, hasArchivedVersions, hasVersion, REQUEST_TAG, versionOf, type TagVersion } from '../blackboard/blackboard.js';
import { InternalError, UserError } from '../errors.js';
import type { SessionContext, TurnAttachments, TurnOutput } from '../machines/session.context.js';
import type { DeltaSinks, Model, ModelReply, ModelRequest } from '../models/model.js';
import { normalizeReply } from '../tools/reply.js';
import { withApprovals, type ApprovalRule } from './approvals.js';
import { managerToolSpecs, ReadBlackboardArgs, workerToolSpecs } from '../tools/schemas.js';
import { managerMessages } from './manager-context.js';
import { EventLoopSlice } from './next-macrotask.js';
import { workerMessages } from './worker-context.js';
import { serverToolSpec, type WorkerToolbox } from './worker-toolbox.js';

/** Finds a worker's skill prompt (the body of its prompt file). */
/**
 * A worker's prompt: by package and worker, and the package version the session is pinned to
 * (`context.package.version`; undefined for a session saved before pinning). May be async:
 * the runtime reads a pinned version from its store.
 */
export type SkillPromptLookup = (packageId: string, workerId: string, version?: string) => string | undefined | Promise<string | undefined>;

/**
 * Where a session's model call streams its text and tool calls: the runtime gives one, which
 * answers for a session while one of its listeners wants deltas (undefined: the model does not
 * stream). Asked once as each call starts, so text and tool calls stream together or not at all,
 * with the agent that makes the call (the workers of a fan-out stream at once).
 */
export type DeltaLookup = (sessionId: string, agent?: { agent: 'manager' | 'worker'; workerId: string | null }) => DeltaSinks | undefined;

/** Reads archived versions of a session's tag (the runtime gives one, reading its store or memory). */
export type TagVersionLookup = (sessionId: string, tag: string, versions: readonly number[]) => Promise<TagVersion[]>;

/**
 * Asked before each model call with the session's actor system (the runtime gives one: the
 * session's lease must still be held); a rejection means the call is not made.
 */
export type ModelCallGate = (system: object) => Promise<void> | undefined;

/** What the runtime gives its turns; a turn made without them works from the context alone and does not stream. */
export interface TurnOptions {
  /** Reads tag versions whose bodies left the context (without it, a reply that reads one gets no attachment). */
  lookup?: TagVersionLookup;
  /** Where the model call streams its text and tool calls. */
  deltas?: DeltaLookup;
  /** Asked before each model call. */
  gate?: ModelCallGate;
  /** The manager's turn: the deployment's approval policy, asked for each run_worker call of the reply (approvals.ts). */
  approval?: ApprovalRule;
  /** A worker's turn: its MCP tools (offered to the model, pinned, each call judged). Without it a worker has none. */
  toolbox?: WorkerToolbox;
}

/** `model.complete(request)`, once the gate (if any) let it through and unless stopped meanwhile. */
function gated<T>(gate: ModelCallGate | undefined, system: object, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  const waiting = gate?.(system);
  return waiting ? waiting.then(() => (signal.throwIfAborted(), call())) : call();
}

async function fetchVersions(context: SessionContext, wanted: ReadonlyMap<string, number[]>, lookup: TagVersionLookup): Promise<TurnAttachments | undefined> {
  const versions: TurnAttachments['versions'] = [];
  for (const [tag, numbers] of wanted) {
    for (const version of await lookup(context.sessionId, tag, numbers)) versions.push({ tag, version });
  }
  return versions.length ? { versions } : undefined;
}

function want(wanted: Map<string, number[]>, tag: string, versions: readonly number[]): void {
  const list = wanted.get(tag) ?? [];
  for (const v of versions) if (!list.includes(v)) list.push(v);
  if (list.length) wanted.set(tag, list);
}

/**
 * Cheap test, run on every reply: could it read a version whose body is archived (a
 * `version` argument, or the request while some of its parts are archived)? Nearly every
 * reply cannot, and then the turn resolves with the model's reply as it is.
 */
function mayReadArchive(context: SessionContext, reply: ModelReply): boolean {
  const calls = Array.isArray(reply?.toolCalls) ? reply.toolCalls : [];
  // Whether the request is in parts, found out at most once (no closure: this runs per reply).
  let request: boolean | undefined;
  for (const c of calls) {
    const args = c?.function?.arguments;
    if (typeof args !== 'string') continue;
    if (args.includes('version')) return true;
    if (args.includes(REQUEST_TAG) && (request ??= archivedVersions(context.blackboard, REQUEST_TAG).length > 0)) return true;
  }
  // A one-shot JSON decision in the content becomes a tool call later (src/core/tools/reply.ts).
  return calls.length === 0 && typeof reply?.content === 'string' && reply.content.includes('read_blackboard');
}

/** The archived versions the reply's read_blackboard calls need, fetched; undefined when none. */
export async function fetchArchivedReads(context: SessionContext, reply: ModelReply, lookup: TagVersionLookup): Promise<TurnAttachments | undefined> {
  const wanted = new Map<string, number[]>();
  for (const { call, args } of normalizeReply('manager', reply, 'lookup').queue) {
    if (call.function.name !== 'read_blackboard') continue;
    const parsed = ReadBlackboardArgs.safeParse(args);
    if (!parsed.success) continue;
    const { tags, version } = parsed.data;
    for (const tag of tags) {
      if (version === undefined) {
        if (tag === REQUEST_TAG) want(wanted, tag, archivedVersions(context.blackboard, tag));
        continue;
      }
      if (hasVersion(context.blackboard, tag, version) && !versionOf(context.blackboard, tag, version)) want(wanted, tag, [version]);
    }
  }
  return wanted.size ? fetchVersions(context, wanted, lookup) : undefined;
}

/** `onTextDelta` / `onToolCallDelta` only when a listener of this session wants them: the model streams only then. */
function deltas(context: SessionContext, options: TurnOptions, agent: 'manager' | 'worker'): Pick<ModelRequest, 'onTextDelta' | 'onToolCallDelta'> {
  return options.deltas?.(context.sessionId, { agent, workerId: agent === 'worker' ? (context.step?.workerId ?? null) : null }) ?? {};
}

/**
 * Waits for the next macrotask once the slice is used up (see next-macrotask.ts), so timers,
 * `stop()` and other sessions run between rounds; stopped meanwhile, the round ends without a
 * model call.
 */
function yieldToEventLoop(slice: EventLoopSlice, signal: AbortSignal): Promise<void> {
  return (slice.next() ?? Promise.resolve()).then(() => signal.throwIfAborted());
}

/**
 * The manager's model round as the chart's `managerTurn` actor: one call of `model`, with the manager's messages and tools.
 *
 * @example
 * const machine = sessionMachine.provide({ actors: { managerTurn: createManagerTurn(model), workerTurn: createWorkerTurn(model, promptOf) } });
 * const actor = createActor(machine, { input: { sessionId: 's1', package: team } }).start();
 *
 * // Streaming the reply's text as it arrives:
 * const managerTurn = createManagerTurn(model, {
 *   deltas: () => ({ onTextDelta: (text) => process.stdout.write(text), onToolCallDelta: () => {} }),
 * });
 */
export function createManagerTurn(model: Model, options: TurnOptions = {}) {
  const { lookup, gate, approval } = options;
  const slice = new EventLoopSlice();
  return fromPromise<TurnOutput, SessionContext>(({ input, signal, system }) =>
    yieldToEventLoop(slice, signal).then(() => {
      const called = gated(gate, system, signal, () =>
        model.complete({ agent: 'manager', messages: managerMessages(input), tools: [...managerToolSpecs], signal, ...deltas(input, options, 'manager') }),
      );
      const replied = approval ? called.then((reply) => withApprovals(input, reply, approval)) : called;
      // Nothing archived (most sessions, most of the time): no reply can need the archive.
      if (!lookup || !hasArchivedVersions(input.blackboard)) return replied;
      // A plain (not async) callback: the common reply resolves without an extra promise.
      return replied.then((reply): TurnOutput | Promise<TurnOutput> => {
        if (!reply || !mayReadArchive(input, reply)) return reply;
        return fetchArchivedReads(input, reply, lookup).then((attachments) => (attachments ? { ...reply, attachments } : reply));
      });
    }),
  );
}

/**
 * A worker's model round as the chart's `workerTurn` actor: `promptOf(packageId, workerId)` gives the worker's prompt.
 *
 * @example
 * const prompts: Record<string, string> = { echo: 'Restate the request in one sentence.' };
 * const workerTurn = createWorkerTurn(model, (_packageId, workerId) => prompts[workerId]);
 * // With a gate asked before each model call (a rejection means no call):
 * const gatedTurn = createWorkerTurn(model, (_packageId, workerId) => prompts[workerId], { gate: () => quota.take() });
 */
export function createWorkerTurn(model: Model, promptOf: SkillPromptLookup, options: TurnOptions = {}) {
  const { lookup, gate, toolbox } = options;
  const slice = new EventLoopSlice();
  return fromPromise<TurnOutput, SessionContext>(async ({ input, signal, system }) => {
    await yieldToEventLoop(slice, signal);
    const pkg = input.package;
    const step = input.step;
    const worker = pkg?.workers.find((w) => w.id === step?.workerId);
    if (!pkg || !step || !worker) throw new InternalError('A worker turn started without a package, a step or a known worker.');
    const prompt = await promptOf(pkg.id, worker.id, pkg.version);
    if (prompt === undefined) throw new UserError(`No prompt for worker "${worker.id}" of package "${pkg.id}": is the package folder still there?`);
    // The request's earlier parts left the context: read them for the brief.
    const parts = worker.inputTags.includes(REQUEST_TAG) ? archivedVersions(input.blackboard, REQUEST_TAG) : [];
    const fetched = lookup && parts.length ? await fetchVersions(input, new Map([[REQUEST_TAG, parts]]), lookup) : undefined;
    // Its MCP tools, as pinned: listed before the model call, so a server that is down fails the round, not a call.
    const offered = toolbox && worker.tools?.length ? await toolbox.offer(input, worker) : undefined;
    const reply = await gated(gate, system, signal, () =>
      model.complete({
        agent: 'worker',
        messages: workerMessages(input, worker, prompt, fetched),
        tools: [...workerToolSpecs, ...(offered?.tools.map(serverToolSpec) ?? [])],
        signal,
        ...deltas(input, options, 'worker'),
      }),
    );
    if (!offered || !toolbox) return reply;
    return { ...reply, tools: { pinned: offered.pinned, verdicts: toolbox.judge(input, offered.tools, reply) } };
  });
}
