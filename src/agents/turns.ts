/**
 * The manager and worker turns: the actors the session machine invokes for one LLM round.
 * Each assembles its prompt from the session context and calls the model; the machine then
 * checks the reply's tool calls. Create them here and hand them to `sessionMachine.provide()`.
 */
import { fromPromise } from 'xstate';
import { UserError } from '../errors.js';
import type { SessionContext, TurnOutput } from '../machines/session.context.js';
import type { Model } from '../models/model.js';
import { managerToolSpecs, workerToolSpecs } from '../tools/schemas.js';
import { managerMessages } from './manager-context.js';
import { workerMessages } from './worker-context.js';

/** Finds a worker's skill prompt (the body of its prompt file). */
export type SkillPromptLookup = (packageId: string, workerId: string) => string | undefined;

export function createManagerTurn(model: Model) {
  return fromPromise<TurnOutput, SessionContext>(({ input, signal }) =>
    model.complete({ agent: 'manager', messages: managerMessages(input), tools: [...managerToolSpecs], signal }),
  );
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
