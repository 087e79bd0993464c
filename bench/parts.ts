/**
 * What each part of a Steward round costs: the same scenario run on a stack that grows one
 * layer at a time, in the bench's timing loop beside the other modes (bench/run.ts).
 *
 * - `chart-bare`: the session chart alone (`sessionMachine.provide()` with a turn that hands
 *   the transcript window to the fake model: no prompt assembly, no event-loop slice), driven with
 *   `actor.send` + `waitFor`, as the baseline is;
 * - `chart-turns`: the chart with the runtime's real turns (`createManagerTurn`: the prompt
 *   assembled each round, the event-loop slice before each model call);
 * - `steward-hot`: all of it, through `Session` (the user event's checks, the view, the send
 *   queue, the memory archive) — the mode of figure 1;
 * - `steward-listened`: the same with one listener on `session.subscribe()` (live events
 *   stamped and forwarded);
 * - `steward-memory`: plus the journal (entries, archive, snapshot into a MemoryStore).
 *
 * The difference between two neighbours is what the layer added. The chart's package and
 * seeded blackboard come from a session the runtime created, so both stacks start alike.
 */
import { createActor, fromPromise, waitFor, type Actor } from 'xstate';
import { createManagerTurn } from '../src/core/agents/turns.js';
import { sessionMachine, type SessionMachine } from '../src/core/machines/session.machine.js';
import type { SessionContext, SessionInput, TurnOutput } from '../src/core/machines/session.context.js';
import type { FakeModel } from './fake-model.js';
import { answerText, BURSTS, FIRST_INPUT, verifyTranscript } from './scenario.js';
import { runStewardSession, type StewardHarness } from './steward.js';
import type { SessionSamples } from './stats.js';

export type ChartStack = 'bare' | 'turns';

const WAIT_STATE = { waiting_user: 'intake' } as const;
const atRest = (s: ReturnType<Actor<SessionMachine>['getSnapshot']>) => s.status !== 'active' || s.matches(WAIT_STATE);

/** The chart with the bare turn or the runtime's own (no lookup, no gate, no text deltas: a store-less runtime's). */
export function chartMachine(model: FakeModel, stack: ChartStack): SessionMachine {
  const managerTurn =
    stack === 'bare'
      ? fromPromise<TurnOutput, SessionContext>(({ input }) => model.complete({ agent: 'manager', messages: input.transcripts.manager.messages, tools: [] }))
      : createManagerTurn(model);
  return sessionMachine.provide({ actors: { managerTurn } });
}

/** The input a runtime session starts from (package and seeded blackboard), taken from one it created. */
export async function chartInput(h: StewardHarness): Promise<Omit<SessionInput, 'sessionId'>> {
  const session = await h.open('parts_input');
  const { package: pkg, blackboard, maxBurst, transcripts } = session.actorRef.getSnapshot().context;
  session.stop();
  return { package: pkg, blackboard, maxBurst, window: transcripts.window };
}

function send(actor: Actor<SessionMachine>, text: string) {
  actor.send({ type: 'user_submitted_input', text, at: new Date(0).toISOString() });
  return waitFor(actor, atRest);
}

/** One whole session on the chart alone, timed like the others. */
export async function runChartSession(model: FakeModel, machine: SessionMachine, input: Omit<SessionInput, 'sessionId'>, id: string): Promise<SessionSamples> {
  const waitSeen: number[] = [];
  const resumeStart: number[] = [];
  model.begin();
  const actor = createActor(machine, { input: { ...input, sessionId: id } }).start();
  let snap = await send(actor, FIRST_INPUT);
  for (let c = 0; c < BURSTS; c++) {
    waitSeen.push(performance.now());
    if (!snap.matches(WAIT_STATE)) throw new Error(`[chart] expected to wait after burst ${c + 1}, got ${JSON.stringify(snap.value)}`);
    resumeStart.push(performance.now());
    snap = await send(actor, answerText(c + 1));
  }
  if (snap.status !== 'done') throw new Error(`[chart] expected done, got ${snap.status} ${JSON.stringify(snap.value)}`);
  const stamps = model.takeStamps();
  verifyTranscript('chart', snap.context.transcripts.manager.messages, model.calls);
  actor.stop();
  return { stamps, waitSeen, resumeStart };
}

/** A hot session with one listener attached for its whole life. */
export async function runListenedSession(h: StewardHarness, id: string): Promise<SessionSamples> {
  let events = 0;
  const listen = (session: { subscribe: (l: () => void) => () => void }) => session.subscribe(() => void events++);
  const samples = await runStewardSession(h, id, { onOpen: listen });
  if (events === 0) throw new Error('[steward listened] the listener got no event');
  return samples;
}
