// (d0) Steward's session chart alone, for the parts of the `steward` row: the checkout's
// `sessionMachine` (its public API) with a turn that hands the transcript window to the
// harness's model, driven with actor.send + waitFor as the `xstate` row is. No prompt assembly,
// no `Session` (its checks, view, send queue and archive), no runtime: what `steward` adds to
// this row is theirs, what this row adds to `xstate` is the chart's own steps and reports.
//
//   ONLY=xstate,chart,steward npm run bench:peers
//   STEWARD_BEFORE=<checkout> ONLY=xstate,chart,chart_before,steward,steward_before npm run bench:peers
//
// The chart starts from the context a runtime session of the bench package starts with (its
// package and seeded blackboard), taken once from a session the checkout's runtime created.
// Durable: the actor's persisted snapshot as JSON, and createActor({ snapshot }) from it.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { MAX_BURST, USER_TEXT } from '../scenario.mjs';
import { HARNESS_WINDOW, HarnessModel, openSeeded, resultsOf, steward, STEWARD_DIR, WAIT_STATE } from './steward.mjs';

const AT = new Date(0).toISOString();

/** The chart variant on `api` (a checkout's public API, with `dir` its folder), as variant `name`. */
export function chartOn(api, name, dir) {
  // The checkout's own XState (its `xstate` import and this require share one instance).
  const { createActor, fromPromise, waitFor } = createRequire(join(dir, 'package.json'))('xstate');
  const model = new HarnessModel();
  const managerTurn = fromPromise(({ input }) => model.complete({ agent: 'manager', messages: input.transcripts.manager.messages, tools: [] }));
  const machine = api.sessionMachine.provide({ actors: { managerTurn } });
  const runtime = api.createRuntime({ model, packagesDir: join(dir, 'bench/packages'), maxBurst: MAX_BURST, window: HARNESS_WINDOW });
  let input;
  const startInput = async () => {
    if (input) return input;
    const session = await openSeeded(runtime, `${name}_input`);
    const { package: pkg, blackboard, maxBurst, transcripts } = session.actorRef.getSnapshot().context;
    session.stop();
    return (input = { package: pkg, blackboard, maxBurst, window: transcripts.window });
  };
  // At rest: waiting for the user (any wait: a wrong one is reported below), done, or stopped.
  const atRest = (s) => s.status !== 'active' || (typeof s.value === 'object' && 'waiting_user' in s.value);
  const settled = async (sid, actor) => {
    const s = await waitFor(actor, atRest);
    const state = s.status === 'done' ? 'done' : `waiting_user.${s.value.waiting_user}`;
    if (state !== WAIT_STATE && state !== 'done') throw new Error(`${name} ${sid}: unexpected state ${state} (${s.status})`);
    return { sid, actor, done: state === 'done' };
  };
  const send = (sid, actor, text) => {
    actor.send({ type: 'user_submitted_input', text, at: AT });
    return settled(sid, actor);
  };
  return {
    name,
    async start(sid) {
      const actor = createActor(machine, { input: { ...(await startInput()), sessionId: sid } }).start();
      return send(sid, actor, USER_TEXT);
    },
    resume(h, answer) {
      return send(h.sid, h.actor, answer);
    },
    serialize(h) {
      const str = JSON.stringify(h.actor.getPersistedSnapshot());
      h.actor.stop();
      return str;
    },
    async restore(sid, str) {
      return { sid, actor: createActor(machine, { snapshot: JSON.parse(str) }).start(), done: false };
    },
    persistedBytes(h) {
      return { bytes: Buffer.byteLength(JSON.stringify(h.actor.getPersistedSnapshot())) };
    },
    toolResults(h) {
      return resultsOf(h.actor.getSnapshot().context.transcripts.manager.messages);
    },
    dispose(h) {
      h.actor.stop();
    },
  };
}

export const create = () => chartOn(steward, 'chart', STEWARD_DIR);
