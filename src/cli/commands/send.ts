/**
 * `steward send ID EVENT`: sends one user event and waits until the session waits for the
 * user again. Scriptable: --json prints the view; a refused event exits 1 with the reason.
 *
 * Two processes may send to one session at once. The store's revision check lets exactly
 * one of them write; the other gets `conflict` (it loaded the same revision) or
 * `event_refused` (it loaded after the winner moved the session on). `--revision N` turns
 * the second case into a conflict too: send only if the session is still at revision N.
 */
import type { Command } from 'commander';
import { ConflictError, EventRefusedError } from '../../errors.js';
import { CliError, cliCommand, peekSession, printJson, readTextOption, viewJson, wholeNumber, withContext } from '../context.js';
import { buildEvent, EVENT_ALIASES, resolveEventName } from '../events.js';
import { formatBlocks, headline, waitBlocks } from '../render.js';

interface SendFlags {
  text?: string;
  textFile?: string;
  artifact?: string;
  reason?: string;
  answers?: string;
  package?: string;
  revision?: number;
  json?: boolean;
}

export function register(program: Command): void {
  const aliases = Object.entries(EVENT_ALIASES).map(([alias, full]) => `  ${alias.padEnd(12)}${full}`).join('\n');
  program
    .command('send')
    .description('send one user event to a session and wait until it waits for you again')
    .argument('<id>', 'the session id')
    .argument('<event>', 'a full event name (user_approved_next_step…) or an alias (approve…)')
    .option('--text <text>', 'input: your message ("-" reads it from stdin)')
    .option('--text-file <file>', 'input: read your message from this file')
    .option('--artifact <id>', 'accept / reject: the artifact (default: the one under review)')
    .option('--reason <text>', 'reject-step / reject: why')
    .option('--answers <json>', `answer: a JSON object of question ids to answers, e.g. '{"q1":"yes"}'`)
    .option('--package <id>', 'select: the package')
    .option('--revision <n>', 'send only if the session is still at this revision (see --json of show)', wholeNumber(1))
    .option('--json', 'print the session view as JSON')
    .addHelpText('after', `\nEvents (alias, full name):\n${aliases}`)
    .action(async (id: string, eventName: string, flags: SendFlags, command: Command) => {
      const type = resolveEventName(eventName);
      const text = readTextOption('text', flags.text, flags.textFile);
      await withContext(command.optsWithGlobals(), async (ctx) => {
        // Look first without starting anything: a session saved mid-turn must not have its
        // model call run again by a one-shot command (another process may be running it).
        const peek = await peekSession(ctx, id);
        if (flags.revision !== undefined && peek.revision !== flags.revision) {
          throw new ConflictError(`Session "${id}" is at revision ${peek.revision}, not ${flags.revision}: it changed since you looked. Nothing was sent; look again with \`steward show ${id}\`.`);
        }
        const event = buildEvent(type, { text, artifact: flags.artifact, reason: flags.reason, answers: flags.answers, package: flags.package }, peek.view);
        if (peek.view.phase === 'running') {
          throw new EventRefusedError(
            `"${type}" is not accepted while the agents are working (session "${id}" is in ${peek.view.state}). ` +
              `Wait until it waits for you; if no process is running it (one was interrupted), continue it with: ${cliCommand(`resume ${id}`, ctx.dbPath)}`,
            { eventType: type, state: peek.view.state, accepted: peek.view.acceptedEvents, enabled: [] },
          );
        }
        const session = await ctx.runtime.resumeSession(id);
        if (session.revision !== peek.revision) {
          session.stop();
          throw new ConflictError(`Session "${id}" changed while this command loaded it (revision ${peek.revision} → ${String(session.revision)}): another process wrote first. Nothing was sent; look again with \`steward show ${id}\`.`);
        }
        const result = await session.send(event);
        if (!result.ok) throw new CliError(result.error.code, result.error.message);
        if (flags.json) {
          printJson(viewJson(result.view, session.revision));
        } else {
          const blocks = waitBlocks(result.view, { modelLabel: ctx.model.label, packages: ctx.runtime.packages });
          process.stdout.write(`${headline(result.view)}\n${blocks.length ? `\n${formatBlocks(blocks)}\n` : ''}`);
        }
      });
    });
}
