/**
 * The non-interactive `steward run` (stdin is not a terminal, or --auto): it plays the user
 * — sends the request, approves every step, accepts every artifact, skips questions — and
 * prints a transcript: each wait, each model turn, each artifact's tag bodies, the summary.
 * It stops (exit 1, session saved) when only a human can go on: a model failure, a
 * manager that keeps asking, or a worker's MCP tool call that waits for a person: to be
 * approved, to answer what its server asks, or to be settled after an interruption (none of
 * these is ever decided automatically).
 */
import type { Colors } from './colors.js';
import { stateString } from '../core/machines/refusals.js';
import { ADMIN_GROUP } from '../core/machines/deadlines.js';
import type { UserEvent } from '../core/machines/session.events.js';
import type { Session } from '../runtime/session.js';
import type { SessionView } from '../core/view.js';
import type { SkillPackage } from '../skills/index.js';
import { burstLimitNotice } from '../core/tools/validation.js';
import { aliasOf } from './events.js';
import type { LiveLine } from './live-line.js';
import { followProgress } from './progress.js';
import { formatBlocks, headline, runningLabel, waitBlocks } from './render.js';
import { safeText } from '../text/safe-text.js';
import { pendingCalls } from './tool-calls.js';
import { askingCall, interruptedCall } from './tool-waits.js';

/** The request the demo sends when none is given. */
export const DEMO_REQUEST =
  'A short story about a lighthouse keeper who finds a message in a bottle addressed to her, dated fifty years in the future. Quiet, a little eerie, about 1,500 words.';

/** Messages the autopilot may send in a row without a step or an artifact in between. */
const MAX_NUDGES = 3;
/** A guard against a session that never ends (each iteration is one user event). */
const MAX_EVENTS = 200;

export interface AutopilotOptions {
  request: string;
  /** For a session waiting in skill_selection. */
  packageId: string;
  modelLabel: string;
  packages: ReadonlyMap<string, SkillPackage>;
  /** The command that continues the session, printed when the autopilot stops early. */
  resume: string;
  /** A steward command to paste, for this store (`show ID` → `steward show ID --db …`). */
  command?: (args: string) => string;
  /** Where the transcript's lines go (the command's stdout). */
  write: (text: string) => void;
  /** The colours of the transcript: the command's (./colors.ts). */
  colors: Colors;
  /** Where the reason it stopped early goes (the command's stderr). */
  warn: (text: string) => void;
  /** Who acts (`--as`, default the OS user): the `by` of every event the autopilot sends. */
  by?: string;
  /** On a terminal: the line where the manager's text and a worker's draft grow (a log gets a line per finished one instead). */
  live?: LiveLine;
}

type Decision = { event: UserEvent; say: string } | { stop: string };

/**
 * `retryFailure`: the session already showed a model failure when this run started (it is
 * being continued), so the first move is to try again; a failure during the run stops it.
 */
function decide(view: SessionView, options: AutopilotOptions, nudges: number, retryFailure: boolean): Decision {
  const command = options.command ?? ((args: string) => `steward ${args}`);
  const accepts = (type: UserEvent['type']) => view.acceptedEvents.includes(type);
  switch (view.waitingReason) {
    case 'skill_selection':
      return { event: { type: 'user_selected_package', packageId: options.packageId }, say: `choose the package "${options.packageId}"` };
    case 'intake':
      if (!view.blackboard.some((b) => b.tag === 'request')) {
        return { event: { type: 'user_submitted_input', text: options.request }, say: `request: ${options.request}` };
      }
      if (view.questions?.length && accepts('user_skipped_questions')) return { event: { type: 'user_skipped_questions' }, say: 'skip the questions' };
      if (accepts('user_confirmed_intake')) return { event: { type: 'user_confirmed_intake' }, say: 'confirm the request as it is' };
      break;
    case 'input':
      if (view.notice && view.notice !== burstLimitNotice(view.maxBurst)) {
        if (retryFailure)
          return { event: { type: 'user_submitted_input', text: 'Please try again and go on where you left off.' }, say: 'try the failed model call again' };
        return { stop: 'Stopped: the model failed (see the notice above). Fix the cause, then continue the session.' };
      }
      if (view.questions?.length) return { event: { type: 'user_skipped_questions' }, say: 'skip the questions' };
      if (nudges >= MAX_NUDGES) return { stop: `Stopped: the manager asked ${nudges} times in a row without proposing a step; answer it yourself.` };
      return { event: { type: 'user_submitted_input', text: 'Please go on with your best judgement.' }, say: 'ask the manager to go on' };
    case 'approve_step': {
      // A fan-out's steps are approved one per send, each by its item.
      const item = view.team?.find((t) => t.status === 'proposed');
      if (item) return { event: { type: 'user_approved_next_step', item: item.item }, say: `approve ${item.workerId} (${item.item})` };
      return { event: { type: 'user_approved_next_step' }, say: `approve ${view.pendingStep?.workerId ?? 'the step'}` };
    }
    case 'review_artifact':
      if (view.artifact) return { event: { type: 'user_accepted_artifact', artifactId: view.artifact.id }, say: `accept ${view.artifact.id}` };
      break;
    case 'worker_questions':
      return { event: { type: 'user_skipped_questions' }, say: 'skip the questions' };
    case 'revision':
      return { event: { type: 'user_submitted_input', text: 'Please revise it as you see fit.' }, say: 'ask for a revision' };
    case 'approve_tool': {
      // Approving steps and accepting artifacts is not approving what a tool does outside the
      // session: no mode of the autopilot means "approve every tool call", so a person decides.
      const calls = pendingCalls(view).map((c) => `${c.callId} (${c.server}.${c.tool})`);
      return {
        stop:
          `Stopped: ${calls.length === 1 ? 'a tool call waits' : `${calls.length} tool calls wait`} for a person's decision: ${calls.join(', ')}. ` +
          `The autopilot never approves a tool call; decide each with \`${command(`send ${view.id} approve-call --call ID`)}\` or \`${command(`send ${view.id} reject-call --call ID --reason TEXT`)}\`, or continue with \`steward run\` on a terminal.`,
      };
    }
    case 'tool_input': {
      // What a server asks a person (a confirmation, a sign-in) is theirs to answer, like an approval.
      const call = askingCall(view);
      const name = call ? `${call.server}.${call.tool} (${call.callId})` : 'a tool call';
      return {
        stop:
          `Stopped: ${name} asks a person for input. The autopilot never answers for a person; answer with ` +
          `\`${command(`send ${view.id} answer-call --call ${call?.callId ?? 'ID'} --responses JSON`)}\` (the requests are shown above), or continue with \`steward run\` on a terminal.`,
      };
    }
    case 'tool_interrupted': {
      // Whether a call that may have taken effect runs again is a person's call: running it blindly could do it twice.
      const call = interruptedCall(view);
      const id = call?.callId ?? 'ID';
      return {
        stop:
          `Stopped: ${call ? `${call.server}.${call.tool} (${id})` : 'a tool call'} was cut off when the process running it stopped; it may or may not have taken effect. ` +
          `The autopilot never decides that; run it again with \`${command(`send ${view.id} approve-call --call ${id}`)}\`, skip it with ` +
          `\`${command(`send ${view.id} reject-call --call ${id} --reason TEXT`)}\`, or give its result with \`${command(`send ${view.id} give-result --call ${id} --result TEXT`)}\`.`,
      };
    }
    default:
      break;
  }
  return { stop: `Stopped: no automatic answer in ${view.state} (accepted: ${view.acceptedEvents.map(aliasOf).join(', ') || 'none'}).` };
}

/** Drives the session to `done`; resolves with the exit code. */
export async function autopilot(session: Session, options: AutopilotOptions): Promise<number> {
  const live = options.live;
  const c = options.colors;
  const write = (text: string) => {
    live?.clear();
    options.write(text);
  };
  const render = { modelLabel: options.modelLabel, packages: options.packages };

  // One line per model turn, from the actor's snapshots.
  let lastTurn = '';
  const subscription = session.actorRef.subscribe({
    next: (snapshot) => {
      const label = runningLabel(snapshot, options.modelLabel);
      const key = label && `${label}|${snapshot.context.ledger.rounds}`;
      // A fan-out's workers write in running.team.working: the label names those still writing.
      const state = stateString(snapshot.value);
      if (label && key && key !== lastTurn && (state.endsWith('.thinking') || state === 'running.team.working')) {
        lastTurn = key;
        write(c.dim(`  … ${label}`));
      }
    },
    error: () => {} /* the session reports its own failure */,
  });
  // Then, from the event stream, what each round took and which tool calls were refused.
  const offProgress = followProgress(session, {
    modelLabel: options.modelLabel,
    line: (text) => write(c.dim(`    ${text}`)),
    drafts: (text) => write(c.dim(`    ${text}`)),
    ...(live ? { live: (text: string) => live.show(text), width: live.width } : {}),
  });

  try {
    let view = session.view();
    if (view.phase === 'running') {
      write(c.dim(`Resuming ${session.id} in ${view.state}: the interrupted model call runs again.`));
      view = await session.settled();
    }
    let nudges = 0;
    for (let events = 0; view.phase !== 'done'; events++) {
      write('');
      write(c.bold(headline(view)));
      const blocks = waitBlocks(view, render);
      if (blocks.length) write(formatBlocks(blocks, c));
      if (events >= MAX_EVENTS) return stop(`Stopped after ${MAX_EVENTS} user events without reaching done.`);
      const decision = decide(view, options, nudges, events === 0);
      if ('stop' in decision) return stop(decision.stop);
      nudges = decision.event.type === 'user_submitted_input' && view.waitingReason === 'input' ? nudges + 1 : 0;
      write(c.green(`→ (auto) ${decision.say}`));
      // Local, holding the database: the CLI decides as admin (any wait's deciders take it).
      const result = await session.send({
        ...decision.event,
        ...(options.by !== undefined ? { by: options.by } : {}),
        groups: [ADMIN_GROUP],
        through: 'cli',
      });
      if (!result.ok) return stop(`The session refused "${decision.event.type}" [${result.error.code}]: ${result.error.message}`);
      view = result.view;
    }
    write('');
    write(formatBlocks(waitBlocks(view, render), c));
    write('');
    const command = options.command ?? ((args: string) => `steward ${args}`);
    write(
      `Session ${session.id} is done (${view.rounds} model rounds). See it again with \`${command(`show ${session.id}`)}\` and \`${command(`log ${session.id}`)}\`.`,
    );
    return 0;
  } finally {
    subscription.unsubscribe();
    offProgress();
    live?.clear();
  }

  function stop(message: string): number {
    options.warn(`${safeText(message)}\nThe session is saved; continue it with: ${options.resume}\n`);
    return 1;
  }
}
