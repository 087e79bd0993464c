/**
 * The chart as a runtime runs it when every package's waits have deadlines and deciders: the
 * session machine whose context gives the package it starts with the catalogue's testing
 * wait terms (`withTestingWaitTerms`: escalate to `leads`, then remind, then reject; its
 * first worker decided by `ops`). Until the loader reads deadlines from a package, this is how
 * a test gets a runtime session whose waits have them; a journal replays the same way, since
 * the replay starts from the same machine.
 */
import { createMachine } from 'xstate';
import { sessionMachine, type SessionMachine } from '../../src/machine.js';
import type { PackageInfo, SessionInput } from '../../src/core/machines/session.context.js';
import { withTestingWaitTerms } from '../../src/testing/catalogue.js';

type ContextFactory = (args: { input: SessionInput } & Record<string, unknown>) => unknown;

/**
 * @example
 * const runtime = createRuntime({ model, store, machine: machineWithWaitTerms() });
 */
export function machineWithWaitTerms(terms: (pkg: PackageInfo) => PackageInfo = withTestingWaitTerms): SessionMachine {
  const context = sessionMachine.config.context as unknown as ContextFactory;
  const config = {
    ...sessionMachine.config,
    context: (args: { input: SessionInput } & Record<string, unknown>) =>
      context({ ...args, input: { ...args.input, package: args.input.package ? terms(args.input.package) : args.input.package } }),
  };
  return createMachine(config as never, sessionMachine.implementations as never) as unknown as SessionMachine;
}
