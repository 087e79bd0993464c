/**
 * A snapshot of a session machine — Steward's `sessionMachine` or an app's `.provide()` of
 * it — with its context typed. The runtime holds machines as `AnyStateMachine` (an app
 * brings its own provided one), so a snapshot is typed where it is made (restored from the
 * store, replayed from the journal, forked) and read everywhere else without a cast.
 */
import type { MachineSnapshot } from 'xstate';
import type { SessionContext } from './session.context.js';

// The other parameters stay open (as in AnyMachineSnapshot): a provided machine may differ in them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SessionSnapshot = MachineSnapshot<SessionContext, any, any, any, any, any, any, any>;
