/**
 * The `steward` command line. `buildProgram()` assembles the commands (one file each under
 * ./commands, each exporting `register(program)`); `main()` runs it and turns failures into
 * a one-line message and a non-zero exit code, never a stack trace (STEWARD_DEBUG=1 shows it).
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { stewardRoot } from '../package-root.js';
import { Command } from 'commander';
import { StewardError } from '../core/errors.js';
import * as auditCommand from './commands/audit.js';
import * as diagramCommand from './commands/diagram.js';
import * as forkCommand from './commands/fork.js';
import * as initPackageCommand from './commands/init-package.js';
import * as inspectCommand from './commands/inspect.js';
import * as linkCommand from './commands/link.js';
import * as listCommand from './commands/list.js';
import * as logCommand from './commands/log.js';
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

function version(): string {
  const pkg = JSON.parse(readFileSync(join(stewardRoot(import.meta.url), 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

export function buildProgram(): Command {
  const program = new Command('steward')
    .description('Steward: human-in-the-loop teams of LLM agents, driven by a statechart.')
    .version(version())
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

  runCommand.register(program);
  newCommand.register(program);
  sendCommand.register(program);
  resumeCommand.register(program);
  showCommand.register(program);
  listCommand.register(program);
  logCommand.register(program);
  auditCommand.register(program);
  forkCommand.register(program);
  upgradeCommand.register(program);
  packagesCommand.register(program);
  initPackageCommand.register(program);
  inspectCommand.register(program);
  diagramCommand.register(program);
  serveCommand.register(program);
  linkCommand.register(program);
  webhooksCommand.register(program);

  return program;
}

/** Parses `argv` and runs the command; resolves with the exit code it also sets on `process`. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  // `steward log ID | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const program = buildProgram();
  let json = false;
  program.hook('preAction', (_program, action) => {
    json = Boolean(action.opts().json);
  });
  try {
    await program.parseAsync(argv as string[]);
  } catch (error) {
    const code = StewardError.isInstance(error) ? error.code : 'internal_error';
    const message = withCliHint(code, error instanceof Error ? error.message : String(error), resolveDbPath(program.opts()));
    process.stderr.write(`steward [${code}]: ${safeText(message)}\n`);
    if (process.env.STEWARD_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    if (json) printJson({ error: { code, message } });
    process.exitCode = 1;
  }
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}

/** Library errors say what happened; the CLI adds the command that helps, for this store. */
function withCliHint(code: string, message: string, dbPath: string): string {
  if (code === 'session_not_found') {
    const named = message.includes(dbPath) ? message : message.replace(/in this store\.$/, `in the store ${dbPath}.`);
    return `${named} List the sessions with \`${cliCommand('list', dbPath)}\` or create one with \`${cliCommand('new', dbPath)}\`.`;
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

if (isEntryPoint()) await main();
