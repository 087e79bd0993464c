/**
 * The `steward` command line. `buildProgram(io)` assembles the commands (one file each under
 * ./commands, each exporting `register(program, io)`); `main(argv, io)` runs it and turns failures into
 * a one-line message and a non-zero exit code, never a stack trace (STEWARD_DEBUG=1 shows it).
 * It never exits the process: it resolves with the exit code (bin/steward.mjs sets it), after the
 * command closed what it opened, so it can run inside another program (the tests do, see ./io.ts).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stewardVersion } from '../package-root.js';
import { Command, CommanderError } from 'commander';
import { StewardError } from '../core/errors.js';
import * as auditCommand from './commands/audit.js';
import * as diagramCommand from './commands/diagram.js';
import * as forkCommand from './commands/fork.js';
import * as initPackageCommand from './commands/init-package.js';
import * as inspectCommand from './commands/inspect.js';
import * as linkCommand from './commands/link.js';
import * as listCommand from './commands/list.js';
import * as logCommand from './commands/log.js';
import * as mcpCommand from './commands/mcp.js';
import * as newCommand from './commands/new.js';
import * as packagesCommand from './commands/packages.js';
import * as resumeCommand from './commands/resume.js';
import * as runCommand from './commands/run.js';
import * as sendCommand from './commands/send.js';
import * as serveCommand from './commands/serve.js';
import * as showCommand from './commands/show.js';
import * as upgradeCommand from './commands/upgrade.js';
import * as webhooksCommand from './commands/webhooks.js';
import { cliCommand, collect, printJson, resolveDbPath } from './context.js';
import { safeText } from '../text/safe-text.js';
import { processIo, type CliIo } from './io.js';
import { colorsOn } from './colors.js';
import type { ExitStatus } from './exit-status.js';

export function buildProgram(io: CliIo = processIo(), status: ExitStatus = { exitCode: 0 }): Command {
  const program = new Command('steward')
    // Set before the commands are added, which inherit both: help and errors go to `io`, and
    // commander throws instead of exiting the process (main returns its exit code).
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // A terminal's width, else commander's default.
      getOutHelpWidth: () => (io.stdout.isTTY && io.stdout.columns) || 80,
      getErrHelpWidth: () => (io.stderr.isTTY && io.stderr.columns) || 80,
      getOutHasColors: () => colorsOn(io.env, io.stdout),
      getErrHasColors: () => colorsOn(io.env, io.stderr),
    })
    .description('Steward: human-in-the-loop teams of LLM agents, driven by a statechart.')
    .version(stewardVersion())
    .option('--db <path>', 'the sessions: an SQLite file or a postgres:// URL (env STEWARD_DB; default .steward/steward.db)')
    .option('--as <name>', 'who acts: recorded as `by` with every user event sent (default: the OS user name)')
    .option(
      '--packages <dir>',
      'a folder of your skill packages, beside the bundled ones; repeatable (env STEWARD_PACKAGES, ":"-separated; else "packages" in stately.config.json)',
      collect,
    )
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      '\nModel: OPENAI_API_KEY and/or OPENAI_BASE_URL (+ STEWARD_MODEL, STEWARD_TIMEOUT_MS) select an\nOpenAI-compatible server; without them the offline demo model (no LLM) runs.',
    );

  runCommand.register(program, io, status);
  newCommand.register(program, io);
  sendCommand.register(program, io);
  resumeCommand.register(program, io);
  showCommand.register(program, io);
  listCommand.register(program, io);
  logCommand.register(program, io);
  auditCommand.register(program, io);
  forkCommand.register(program, io);
  upgradeCommand.register(program, io);
  packagesCommand.register(program, io);
  initPackageCommand.register(program, io);
  inspectCommand.register(program, io);
  diagramCommand.register(program, io);
  serveCommand.register(program, io);
  linkCommand.register(program, io);
  mcpCommand.register(program, io);
  webhooksCommand.register(program, io);

  return program;
}

/**
 * Parses `argv` and runs the command with `io` (default: this process's environment, folder and
 * streams); resolves with its exit code once everything the command opened is closed.
 */
export async function main(argv: readonly string[] = process.argv, io: CliIo = processIo()): Promise<number> {
  const status: ExitStatus = { exitCode: 0 };
  const program = buildProgram(io, status);
  let json = false;
  program.hook('preAction', (_program, action) => {
    json = Boolean(action.opts().json);
  });
  try {
    await program.parseAsync(argv as string[]);
  } catch (error) {
    // Help, --version and commander's usage errors: commander has written what it had to say.
    if (error instanceof CommanderError) return error.exitCode;
    const code = StewardError.isInstance(error) ? error.code : 'internal_error';
    const message = withCliHint(code, error instanceof Error ? error.message : String(error), resolveDbPath(program.opts(), io), io);
    io.stderr.write(`steward [${code}]: ${safeText(message)}\n`);
    if (io.env.STEWARD_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    if (json) printJson(io, { error: { code, message } });
    return 1;
  }
  return status.exitCode;
}

/** Library errors say what happened; the CLI adds the command that helps, for this store. */
function withCliHint(code: string, message: string, dbPath: string, io: CliIo): string {
  if (code === 'session_not_found') {
    const named = message.includes(dbPath) ? message : message.replace(/in this store\.$/, `in the store ${dbPath}.`);
    return `${named} List the sessions with \`${cliCommand('list', dbPath, io)}\` or create one with \`${cliCommand('new', dbPath, io)}\`.`;
  }
  if (code === 'store_read_only') return `${message} The reading commands (list, show, log, audit) still work on it.`;
  // A PostgreSQL message names STEWARD_DB already.
  if (code.startsWith('store_') && !message.includes('STEWARD_DB')) return `${message} (--db or STEWARD_DB chooses the store.)`;
  return message;
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/** The `steward` process (bin/steward.mjs): `main` on the process's own I/O, its exit code the process's. */
export async function runAsProcess(argv: readonly string[] = process.argv): Promise<void> {
  // `steward log ID | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  process.exitCode = await main(argv);
}

if (isEntryPoint()) await runAsProcess();
