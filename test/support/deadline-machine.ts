/**
 * The chart as a runtime runs it when every package's waits have deadlines and deciders: the
 * session machine whose context gives the package it starts with these wait terms: each
 * decision wait escalates to `leads`, then reminds, then rejects, and the first worker is
 * decided by `ops`. A test gets a runtime session whose waits go through every outcome, on
 * any package; a journal replays the same way, since the replay starts from the same machine.
 */
import { createMachine } from 'xstate';
import { sessionMachine, type SessionMachine } from '../../src/machine.js';
import type { PackageInfo, SessionInput } from '../../src/core/machines/session.context.js';
import { DECISION_WAITS, type DeadlinePolicy } from '../../src/core/machines/deadlines.js';

/** Escalate, remind, reject: every outcome, in that order, at each decision wait. */
const EVERY_OUTCOME: DeadlinePolicy = Object.fromEntries(
  DECISION_WAITS.map((reason) => [
    reason,
    { after: '1h', outcome: 'escalate', to: 'leads', then: { after: '1h', outcome: 'remind', then: { after: '1h', outcome: 'reject' } } },
  ]),
);

/** The package with EVERY_OUTCOME's deadlines and its first worker decided by `ops`. */
function everyOutcome(pkg: PackageInfo): PackageInfo {
  const workers = pkg.workers.map((w, i) => (i === 0 ? { ...w, approvers: ['ops'], reviewers: ['ops'] } : w));
  return { ...pkg, workers, deadlines: EVERY_OUTCOME };
}

type ContextFactory = (args: { input: SessionInput } & Record<string, unknown>) => unknown;

/**
 * @example
 * const runtime = createRuntime({ model, store, machine: machineWithWaitTerms() });
 */
export function machineWithWaitTerms(terms: (pkg: PackageInfo) => PackageInfo = everyOutcome): SessionMachine {
  const context = sessionMachine.config.context as unknown as ContextFactory;
  const config = {
    ...sessionMachine.config,
    context: (args: { input: SessionInput } & Record<string, unknown>) =>
      context({ ...args, input: { ...args.input, package: args.input.package ? terms(args.input.package) : args.input.package } }),
  };
  return createMachine(config as never, sessionMachine.implementations as never) as unknown as SessionMachine;
}
