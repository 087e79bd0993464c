/**
 * The interactive `steward run`: shows what the session waits for, offers only the actions
 * the state accepts, and shows a spinner (who works, burst n/max) while model turns run.
 * Ctrl-C — at a prompt or during a model turn — leaves the session saved and prints the
 * command that continues it.
 */
import * as p from '@clack/prompts';
import pc from 'picocolors';
import type { UserEvent, UserEventType } from '../core/machines/session.events.js';
import { ADMIN_GROUP } from '../core/machines/deadlines.js';
import { storedSnapshot } from '../runtime/persisted.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Session } from '../runtime/session.js';
import { sessionView } from '../core/view.js';
import type { SessionView } from '../core/view.js';
import type { SkillPackage } from '../skills/index.js';
import { aliasOf, EVENT_LABELS } from './events.js';
import { followProgress } from './progress.js';
import { headline, runningLabel, waitBlocks, type Block, type RenderOptions } from './render.js';
import { safeLine, safeText } from '../text/safe-text.js';
import { askInterruptedCall, askToolCall, askToolInput, QUIT } from './tool-prompts.js';
import { askTeamArtifact, askTeamStep, editThenAccept, editThenApprove } from './item-prompts.js';
import { proposedItems, reviewedItems } from '../core/team-items.js';

export interface InteractiveOptions {
  modelLabel: string;
  isDemoModel: boolean;
  packages: ReadonlyMap<string, SkillPackage>;
  /** The command that continues the session. */
  resume: string;
  /** A steward command to paste, for this store (`show ID` → `steward show ID --db …`). */
  command: (args: string) => string;
  /** The runtime the session lives in: used to re-read it when another process moved it on. */
  runtime?: Runtime;
  /** Sent first when the session still waits for its request. */
  request?: string;
  /** Who acts (`--as`, default the OS user): the `by` of every event sent. */
  by?: string;
  /** Opens text in the user's editor and returns what was saved (default: $VISUAL / $EDITOR; see editor.ts). */
  editText?: (text: string, name: string) => Promise<string | undefined>;
}

/** The menu's extra choices: not events of their own, but an event with its edits. */
const EDIT_THEN_APPROVE = '__edit_then_approve__';
const EDIT_THEN_ACCEPT = '__edit_then_accept__';

function showBlocks(blocks: Block[]): void {
  for (const block of blocks) {
    if (block.tone === 'warn') p.log.warn(`${pc.bold(block.title)}\n${block.body}`);
    else if (block.tone === 'error') p.log.error(`${pc.bold(block.title)}\n${block.body}`);
    else p.note(block.body, block.title);
  }
}

function inputPrompt(view: SessionView): string {
  switch (view.waitingReason) {
    case 'intake':
      return view.blackboard.some((b) => b.tag === 'request') ? 'Your answer to the manager' : 'Describe the work you want (Ctrl-C to quit for now)';
    case 'revision':
      return `What should change in ${view.artifact?.id ?? 'the artifact'}?`;
    default:
      return 'Your message to the manager (Ctrl-C to quit for now)';
  }
}

/** What an answer also says for the wait after it: a rejection's "what should change" is the revision's text. */
interface FollowUp {
  revision?: string;
}

/** Asks for one action and its details; undefined when the user quits (Ctrl-C, Esc or "Quit"). */
async function ask(view: SessionView, offered: readonly UserEventType[], options: InteractiveOptions, followUp: FollowUp): Promise<UserEvent | undefined> {
  if (view.waitingReason === 'approve_tool') return askToolCall(view);
  if (view.waitingReason === 'tool_input') return askToolInput(view);
  if (view.waitingReason === 'tool_interrupted') return askInterruptedCall(view);
  // A fan-out: each proposed step, then each artifact under review, asked about in turn.
  if (proposedItems(view).length) return askTeamStep(view, options.packages);
  if (reviewedItems(view).length) return askTeamArtifact(view, options.editText);
  let type: UserEventType;
  if (offered.length === 1 && offered[0] === 'user_submitted_input') {
    type = 'user_submitted_input';
  } else {
    const choice = await p.select<string>({
      message: headline(view),
      options: [
        ...offered.map((t) => ({ value: t, label: EVENT_LABELS[t], hint: aliasOf(t) })),
        // After the events (their order stays as the chart gives it): the same events with edits.
        ...(offered.includes('user_approved_next_step')
          ? [{ value: EDIT_THEN_APPROVE, label: 'Edit, then approve', hint: 'change the reason or the role first' }]
          : []),
        ...(offered.includes('user_accepted_artifact') && options.editText
          ? [{ value: EDIT_THEN_ACCEPT, label: 'Edit, then accept', hint: 'change a body in $EDITOR first' }]
          : []),
        { value: QUIT, label: 'Quit for now', hint: 'the session is saved' },
      ],
    });
    if (p.isCancel(choice) || choice === QUIT) return undefined;
    if (choice === EDIT_THEN_APPROVE) return editThenApprove(view.pendingStep!, view.packageId, options.packages);
    if (choice === EDIT_THEN_ACCEPT) return editThenAccept(view.artifact!, options.editText!);
    type = choice as UserEventType;
  }

  const text = async (message: string, required: boolean): Promise<string | undefined | symbol> => {
    const value = await p.text({
      message,
      ...(required
        ? { validate: (v: string | undefined) => (v?.trim() ? undefined : 'Write something (Ctrl-C to quit).') }
        : { placeholder: '(optional: Enter to skip)' }),
    });
    if (p.isCancel(value)) return value;
    return value?.trim() ? value.trim() : undefined;
  };

  switch (type) {
    case 'user_submitted_input': {
      const value = await text(inputPrompt(view), true);
      return typeof value === 'string' ? { type, text: value } : undefined;
    }
    case 'user_rejected_next_step': {
      const reason = await text('Why? (the manager is told)', false);
      if (typeof reason === 'symbol') return undefined;
      return { type, ...(reason ? { reason } : {}) };
    }
    case 'user_accepted_artifact':
      return { type, artifactId: view.artifact!.id };
    case 'user_rejected_artifact': {
      // Asked once: the chart next waits in `revision` for what should change, and the loop
      // sends this answer there. Not also as the rejection's reason: the worker's notes are
      // the reason and the revision text together, and would hold it twice.
      const changes = await text(`What should change in ${view.artifact!.id}? (the worker revises it)`, true);
      if (typeof changes !== 'string') return undefined;
      followUp.revision = changes;
      return { type, artifactId: view.artifact!.id };
    }
    case 'user_answered_questions': {
      const answers: Record<string, string> = {};
      for (const q of view.questions ?? []) {
        const answer = await text(safeLine(q.text), false);
        if (typeof answer === 'symbol') return undefined;
        if (answer) answers[q.id] = answer;
      }
      return { type, answers };
    }
    case 'user_selected_package': {
      const packageId = await p.select<string>({
        message: 'Which package?',
        options: [...options.packages.values()].map((pkg) => ({ value: pkg.id, label: pkg.title, hint: pkg.id })),
      });
      return p.isCancel(packageId) ? undefined : { type, packageId };
    }
    default:
      return { type } as UserEvent;
  }
}

/**
 * Runs `work` under a spinner that follows the session's snapshots. Clack's spinner takes
 * the terminal while it spins and exits the process on Ctrl-C; the 'exit' hook prints how
 * to continue (the session's last write is in the store; a model call in flight runs again).
 */
async function withSpinner<T>(session: Session, options: InteractiveOptions, work: () => Promise<T>): Promise<T> {
  const interrupted = () => {
    process.stderr.write(`\nInterrupted. The session is saved; continue it with:\n  ${options.resume}\n`);
    process.exitCode = 130;
  };
  process.once('exit', interrupted);
  const spin = p.spinner({ onCancel: () => process.exit(130) });
  spin.start(runningLabel(session.actorRef.getSnapshot(), options.modelLabel) ?? 'Saving');
  const subscription = session.actorRef.subscribe({
    next: (snapshot) => {
      const label = runningLabel(snapshot, options.modelLabel);
      if (label) spin.message(label);
    },
    error: () => {} /* the session reports its own failure */,
  });
  // The spinner's line is the live line: the manager's text and a worker's draft grow there.
  const offProgress = followProgress(session, {
    modelLabel: options.modelLabel,
    status: (text) => spin.message(text),
    live: (text) => spin.message(text),
    width: Math.max(20, (process.stdout.columns ?? 80) - 6),
  });
  const roundsBefore = session.view().rounds;
  try {
    const result = await work();
    const rounds = session.view().rounds - roundsBefore;
    spin.stop(rounds > 0 ? `${rounds} model round${rounds === 1 ? '' : 's'} (${options.modelLabel})` : 'Done');
    return result;
  } catch (error) {
    spin.error('Failed');
    throw error;
  } finally {
    subscription.unsubscribe();
    offProgress();
    process.off('exit', interrupted);
  }
}

/** Resolves after `ms` milliseconds. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The session as the store has it now. Another process (`steward send`, a second terminal)
 * may have moved it on since this one loaded it: then it is opened again from the store —
 * after that process finished its turn, so its model call is never made twice.
 */
async function reread(session: Session, options: InteractiveOptions): Promise<Session> {
  const store = options.runtime?.store;
  if (!store || session.revision === undefined) return session;
  let stored = await store.load(session.id);
  if (!stored || stored.revision === session.revision) return session;
  let spin: ReturnType<typeof p.spinner> | undefined;
  while (sessionView(storedSnapshot(options.runtime!.machine, stored)).phase === 'running') {
    spin ??= p.spinner();
    spin.start('Another process is working on this session; waiting for it');
    await sleep(300);
    stored = (await store.load(session.id)) ?? stored;
  }
  spin?.stop('The other process is done');
  session.stop();
  return options.runtime!.resumeSession(session.id);
}

/** The interactive loop; resolves with the exit code. */
export async function interactive(first: Session, options: InteractiveOptions): Promise<number> {
  const render: RenderOptions = { modelLabel: options.modelLabel, packages: options.packages };
  let session = first;
  let view = session.view();
  /** What the person said should change, after a rejection the session took: sent when it waits in `revision`. */
  let revision: string | undefined;
  p.intro(pc.inverse(' steward '));
  p.log.info(
    `Session ${pc.bold(session.id)} · package ${view.packageId ?? '(to choose)'} · model: ${pc.bold(options.modelLabel)}` +
      (options.isDemoModel ? pc.dim('\nOffline demo model, no LLM: set OPENAI_API_KEY (or OPENAI_BASE_URL) for real output.') : ''),
  );

  for (;;) {
    if (view.phase === 'running') {
      p.log.step(`Resuming in ${view.state}: the interrupted model call runs again.`);
      view = await withSpinner(session, options, () => session.settled());
    }
    showBlocks(waitBlocks(view, render));
    if (view.phase === 'done') {
      p.outro(`Done. See it again with ${pc.bold(options.command(`show ${session.id}`))} and ${pc.bold(options.command(`log ${session.id}`))}.`);
      return 0;
    }

    // Before offering anything: another process may have moved the session on meanwhile.
    const latest = await reread(session, options);
    if (latest !== session) {
      session = latest;
      view = session.view();
      p.log.warn(`The session changed elsewhere; it is now in ${view.state}.`);
      continue;
    }

    // What the menu is offered for: if the session moves on while the user chooses (the
    // inspector page, another process), the choice is not sent and the new state is shown.
    const shown = { revision: session.revision, state: view.state, rounds: view.rounds, wait: view.wait };
    let event: UserEvent | undefined;
    const followUp: FollowUp = {};
    if (options.request && view.waitingReason === 'intake' && !view.blackboard.some((b) => b.tag === 'request')) {
      event = { type: 'user_submitted_input', text: options.request };
      p.log.step(`Request: ${options.request}`);
    } else if (revision !== undefined && view.waitingReason === 'revision') {
      event = { type: 'user_submitted_input', text: revision };
      p.log.step(`What should change: ${safeText(revision)}`);
    } else {
      // Offer what the session would take now: the machine's own guards decide.
      event = await ask(view, session.enabledEvents(), options, followUp);
    }
    revision = undefined;
    if (!event) {
      p.outro(`Saved. Continue with ${pc.bold(options.resume)}`);
      return 0;
    }

    session = await reread(session, options);
    const now = session.view();
    if (session.revision !== shown.revision || now.state !== shown.state || now.rounds !== shown.rounds) {
      p.log.warn(
        `The session changed while you were choosing (it was in ${shown.state}, now ${now.state}): "${aliasOf(event.type)}" was not sent.\n${headline(now)}`,
      );
      view = now;
      continue;
    }

    // The decision names the wait the person saw: if it was answered elsewhere meanwhile, it is refused, never applied to the next.
    const sent: UserEvent = {
      ...event,
      ...(options.by !== undefined ? { by: options.by } : {}),
      ...(shown.wait !== undefined ? { wait: shown.wait } : {}),
      // Local, holding the database: the CLI decides as admin (any wait's deciders take it).
      groups: [ADMIN_GROUP],
      through: 'cli',
    };
    const result = await withSpinner(session, options, () => session.send(sent));
    if (!result.ok) {
      if (
        result.error.code === 'event_refused' ||
        result.error.code === 'wait_closed' ||
        result.error.code === 'invalid_event' ||
        result.error.code === 'limit_exceeded'
      ) {
        p.log.warn(safeText(result.error.message));
        // Re-read: the refusal may come from a state this terminal had not seen yet.
        session = await reread(session, options);
        view = session.view();
        continue;
      }
      if (result.error.code === 'conflict') {
        p.log.warn(`${safeText(result.error.message)}\nReloading the session as it is now.`);
        session = await reread(session, options);
        view = session.view();
        continue;
      }
      p.log.error(`[${result.error.code}] ${safeText(result.error.message)}`);
      p.outro(`Continue with ${pc.bold(options.resume)}`);
      return 1;
    }
    // A repeat applied nothing: its follow-up (a rejection's "what should change") belongs to whoever decided first.
    if (result.repeated) p.log.info('This same decision had already answered that wait (from elsewhere): nothing was applied again.');
    else revision = followUp.revision;
    view = result.view;
  }
}
