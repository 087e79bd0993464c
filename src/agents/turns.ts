/**
 * The manager and worker turns: the actors the session machine invokes for one LLM round.
 * Each assembles its prompt from the session context and calls the model; the machine then
 * checks the reply's tool calls. Create them here and hand them to `sessionMachine.provide()`.
 *
 * I/O belongs here, not in transitions: when the manager's reply reads a tag version whose
 * body left the context (`read_blackboard` with `version`), the turn fetches it from the
 * session's archive and attaches it to its output, so the loop tool that runs in the
 * machine stays a pure function of the context and the event.
 */
import { fromPromise } from 'xstate';
import { hasBody, slotOf, type TagVersion } from '../blackboard/blackboard.js';
import { UserError } from '../errors.js';
import type { SessionContext, TurnAttachments, TurnOutput } from '../machines/session.context.js';
import type { Model, ModelReply } from '../models/model.js';
import { normalizeReply } from '../tools/reply.js';
import { managerToolSpecs, ReadBlackboardArgs, workerToolSpecs } from '../tools/schemas.js';
import { managerMessages } from './manager-context.js';
import { workerMessages } from './worker-context.js';

/** Finds a worker's skill prompt (the body of its prompt file). */
export type SkillPromptLookup = (packageId: string, workerId: string) => string | undefined;

/** Reads an archived tag version of a session (the runtime gives one per store, or in memory). */
export type TagVersionLookup = (sessionId: string, tag: string, version: number) => Promise<TagVersion | undefined>;

/** The archived versions the reply's read_blackboard calls name, fetched; undefined when none. */
export async function fetchArchivedReads(context: SessionContext, reply: ModelReply, lookup: TagVersionLookup): Promise<TurnAttachments | undefined> {
  const calls = Array.isArray(reply?.toolCalls) ? reply.toolCalls : [];
  // Cheap test first: nearly every reply reads no old version.
  if (!calls.some((c) => c?.function?.name === 'read_blackboard' && typeof c.function.arguments === 'string' && c.function.arguments.includes('version'))) return undefined;
  const wanted = new Map<string, { tag: string; version: number }>();
  for (const { call, args } of normalizeReply('manager', reply, 'lookup').queue) {
    if (call.function.name !== 'read_blackboard') continue;
    const parsed = ReadBlackboardArgs.safeParse(args);
    if (!parsed.success || parsed.data.version === undefined) continue;
    for (const tag of parsed.data.tags) {
      const slot = slotOf(context.blackboard, tag, parsed.data.version);
      if (slot && !hasBody(slot)) wanted.set(`${parsed.data.version}\u0000${tag}`, { tag, version: parsed.data.version });
    }
  }
  const versions: TurnAttachments['versions'] = [];
  for (const { tag, version } of wanted.values()) {
    const found = await lookup(context.sessionId, tag, version);
    if (found) versions.push({ tag, version: found });
  }
  return versions.length ? { versions } : undefined;
}

export function createManagerTurn(model: Model, lookup?: TagVersionLookup) {
  return fromPromise<TurnOutput, SessionContext>(async ({ input, signal }) => {
    const reply = await model.complete({ agent: 'manager', messages: managerMessages(input), tools: [...managerToolSpecs], signal });
    const attachments = lookup && reply ? await fetchArchivedReads(input, reply, lookup) : undefined;
    return attachments ? { ...reply, attachments } : reply;
  });
}

export function createWorkerTurn(model: Model, promptOf: SkillPromptLookup) {
  return fromPromise<TurnOutput, SessionContext>(async ({ input, signal }) => {
    const pkg = input.package;
    const step = input.step;
    const worker = pkg?.workers.find((w) => w.id === step?.workerId);
    if (!pkg || !step || !worker) throw new UserError('A worker turn started without a package, a step or a known worker (a bug in Steward).');
    const prompt = promptOf(pkg.id, worker.id);
    if (prompt === undefined) throw new UserError(`No prompt for worker "${worker.id}" of package "${pkg.id}": is the package folder still there?`);
    return model.complete({ agent: 'worker', messages: workerMessages(input, worker, prompt), tools: [...workerToolSpecs], signal });
  });
}
