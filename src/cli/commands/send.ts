/**
 * `steward send ID EVENT`: sends one user event and waits until the session waits for the
 * user again. Scriptable: --json prints the view; a refused event exits 1 with the reason.
 *
 * Two processes may send to one session at once. On PostgreSQL the session's lease lets
 * one of them run it (the other gets `session_running_elsewhere`, naming the holder);
 * everywhere, the store's revision check lets exactly one of them write; the other gets `conflict` (it loaded the same revision) or
 * `event_refused` (it loaded after the winner moved the session on). `--revision N` turns
 * the second case into a conflict too: send only if the session is still at revision N.
 * `--wait N` names the wait the decision answers (view.wait): if that wait was answered
 * meanwhile, the send is refused (`wait_closed`), or, the same decision, a harmless repeat.
 */
import type { Command } from 'commander';
import { ConflictError, EventRefusedError, SessionLeasedError } from '../../core/errors.js';
import {
  actorName,
  CliError,
  cliCommand,
  collect,
  peekSession,
  printJson,
  readTextFile,
  readTextOption,
  viewJson,
  wholeNumber,
  withContext,
  sessionIdArgument,
} from '../context.js';
import { buildEvent, EVENT_ALIASES, resolveEventName } from '../events.js';
import type { UserEvent } from '../../core/machines/session.events.js';
import { ADMIN_GROUP } from '../../core/machines/deadlines.js';
import type { SessionView } from '../../core/view.js';
import { formatBlocks, headline, waitBlocks } from '../render.js';
import { safeLine } from '../../text/safe-text.js';
import { holderGone } from '../../store/holder-process.js';
import type { CliIo } from '../io.js';
import { colorsFor } from '../colors.js';

interface SendFlags {
  text?: string;
  textFile?: string[];
  role?: string;
  item?: string;
  edit?: string[];
  artifact?: string;
  reason?: string;
  answers?: string;
  package?: string;
  call?: string;
  arguments?: string;
  responses?: string;
  result?: string;
  revision?: number;
  key?: string;
  wait?: number;
  json?: boolean;
}

export function register(program: Command, io: CliIo): void {
  const aliases = Object.entries(EVENT_ALIASES)
    .map(([alias, full]) => `  ${alias.padEnd(12)}${full}`)
    .join('\n');
  program
    .command('send')
    .description('send one user event to a session and wait until it waits for you again')
    .argument('<id>', 'the session id', sessionIdArgument('steward send'))
    .argument('<event>', 'a full event name (user_approved_next_step…) or an alias (approve…)')
    .option('--text <text>', 'input: your message ("-" reads it from stdin)')
    .option('--text-file <file>', 'input: read your message from this file; accept: the new body of the --edit tag in the same position (repeatable)', collect)
    .option(
      '--item <call>',
      'approve / reject-step: the proposed step of a fan-out (its run_worker call id, as `steward show` lists the team; default: the one step that waits)',
    )
    .option('--artifact <id>', 'accept / reject: the artifact (default: the one under review; in a fan-in, name one when several are)')
    .option('--edit <tag>', "accept: replace this tag's body with the next --text-file (repeatable): a new version written by you", collect)
    .option('--reason <text>', "approve: the edited reason (the worker's task); reject-step / reject: why")
    .option('--role <id>', 'approve: run the worker in this one of its roles (an edit of the step)')
    .option('--answers <json>', `answer: a JSON object of question ids to answers, e.g. '{"q1":"yes"}'`)
    .option('--package <id>', 'select: the package')
    .option('--call <id>', 'approve-call / reject-call / answer-call / give-result: the tool call (default: the one call the wait is about)')
    .option('--arguments <json>', `approve-call: the call's arguments as you edited them, a JSON object (checked against the tool's input schema)`)
    .option(
      '--responses <json>',
      `answer-call: the answers to what the call's server asked, by request key, e.g. '{"confirm":{"action":"accept","content":{"ok":true}}}' (a form's content is checked against the server's schema)`,
    )
    .option('--result <text>', 'give-result: the result of the interrupted call, as the model will read it')
    .option('--revision <n>', 'send only if the session is still at this revision (see --json of show)', wholeNumber(1))
    .option('--key <key>', 'an idempotency key: the same send again with the same key changes nothing and prints the stored result')
    .option(
      '--wait <n>',
      'the wait this decision answers (its number: `steward show --json` prints view.wait): refused (wait_closed) if that wait is no longer open',
      wholeNumber(1),
    )
    .option('--json', 'print the session view as JSON')
    .addHelpText('after', `\nEvents (alias, full name):\n${aliases}`)
    .action(async (id: string, eventName: string, flags: SendFlags, command: Command) => {
      const type = resolveEventName(eventName);
      const edit = type === 'user_accepted_artifact' ? editsFrom(io, flags.edit, flags.textFile) : undefined;
      if (type !== 'user_accepted_artifact' && flags.edit)
        throw new CliError('usage', `--edit does not apply to ${type} (it edits an artifact while accepting it).`);
      if (type !== 'user_accepted_artifact' && (flags.textFile?.length ?? 0) > 1)
        throw new CliError('usage', '--text-file is given more than once: input takes one message.');
      const text = await readTextOption(io, 'text', flags.text, type === 'user_accepted_artifact' ? undefined : flags.textFile?.[0]);
      const by = actorName(command.optsWithGlobals());
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          // Look first without starting anything: a session saved mid-turn must not have its
          // model call run again by a one-shot command (another process may be running it).
          const peek = await peekSession(ctx, id);
          if (flags.revision !== undefined && peek.revision !== flags.revision) {
            throw new ConflictError(
              `Session "${id}" is at revision ${peek.revision}, not ${flags.revision}: it changed since you ` +
                `looked. Nothing was sent; look again with \`steward show ${id}\`.`,
            );
          }
          const event = buildNamingWait(flags.wait, peek.view, () =>
            buildEvent(
              type,
              {
                text,
                artifact: flags.artifact,
                reason: flags.reason,
                role: flags.role,
                item: flags.item,
                edit,
                answers: flags.answers,
                package: flags.package,
                call: flags.call,
                arguments: flags.arguments,
                responses: flags.responses,
                result: flags.result,
                ...(by !== undefined ? { by } : {}),
              },
              peek.view,
            ),
          );
          if (peek.view.phase === 'running') {
            // On PostgreSQL the process running it holds its lease: name it, unless it is
            // known to be gone (a process of this machine): then resume takes it over at once.
            const holder = await ctx.store.leases?.holder(id);
            if (holder && !holderGone(holder.process)) throw new SessionLeasedError(id, holder.owner, holder.expiresInMs);
            throw new EventRefusedError(
              `"${type}" is not accepted while the agents are working (session "${id}" is in ${peek.view.state}). ` +
                `Wait until it waits for you; if no process is running it (one was interrupted), continue it with: ${cliCommand(`resume ${id}`, ctx.dbPath, io)}`,
              { eventType: type, state: peek.view.state, accepted: peek.view.acceptedEvents, enabled: [] },
            );
          }
          const session = await ctx.runtime.resumeSession(id);
          if (session.revision !== peek.revision) {
            session.stop();
            throw new ConflictError(
              `Session "${id}" changed while this command loaded it (revision ${peek.revision} → ` +
                `${String(session.revision)}): another process wrote first. Nothing was sent; look again with ` +
                `\`steward show ${id}\`.`,
            );
          }
          // Local, holding the database: the CLI decides as admin (any wait's deciders take it).
          const sent = { ...event, groups: [ADMIN_GROUP], through: 'cli' as const };
          const result = await session.send(sent, flags.key !== undefined ? { idempotencyKey: flags.key } : {});
          if (!result.ok) throw new CliError(result.error.code, result.error.message);
          if (result.repeated)
            io.stderr.write(
              flags.wait !== undefined
                ? `Wait ${flags.wait} was already answered by this same decision${flags.key !== undefined ? ` (or key ${safeLine(flags.key)} was sent before)` : ''}: nothing was applied again; this is the session now.\n`
                : `Key ${safeLine(flags.key ?? '')} was sent before: nothing was sent again; this is the stored result.\n`,
            );
          if (flags.json) {
            printJson(io, viewJson(result.view, session.revision));
          } else {
            const blocks = waitBlocks(result.view, { modelLabel: ctx.model.label, packages: ctx.runtime.packages });
            io.stdout.write(`${headline(result.view)}\n${blocks.length ? `\n${formatBlocks(blocks, colorsFor(io))}\n` : ''}`);
          }
        },
        { command: 'send' },
      );
    });
}

/**
 * The event, naming the wait `--wait` gave. It is built against the view as it is now (the
 * artifact under review, the question card): when the named wait is no longer open and the
 * event cannot be built there, the send is refused as for a closed wait, not for a missing flag.
 */
function buildNamingWait(wait: number | undefined, view: SessionView, build: () => UserEvent): UserEvent {
  if (wait === undefined) return build();
  try {
    return { ...build(), wait };
  } catch (error) {
    if (wait === view.wait) throw error;
    const now = view.wait !== undefined ? `the open wait is ${view.wait} (${view.waitingReason ?? ''})` : `no wait is open (${view.state})`;
    throw new CliError(
      'wait_closed',
      `Wait ${wait} is no longer open: ${now}. Nothing was sent; look with \`steward show ${view.id}\` and decide on the open wait.`,
    );
  }
}

/** `--edit TAG --text-file F` pairs, in order, as tag → body (own keys: a tag may be named "__proto__"). */
function editsFrom(io: CliIo, tags: string[] | undefined, files: string[] | undefined): Record<string, string> | undefined {
  if (!tags?.length && !files?.length) return undefined;
  if ((tags?.length ?? 0) !== (files?.length ?? 0)) {
    throw new CliError('usage', `accept takes --edit TAG --text-file FILE in pairs (got ${tags?.length ?? 0} --edit and ${files?.length ?? 0} --text-file).`);
  }
  const seen = new Set<string>();
  const pairs = tags!.map((tag, i): [string, string] => {
    if (seen.has(tag)) throw new CliError('usage', `--edit ${tag} is given twice: give each tag once.`);
    seen.add(tag);
    return [tag, readTextFile(io, `--text-file (for --edit ${tag})`, files![i]!)];
  });
  return Object.fromEntries(pairs);
}
