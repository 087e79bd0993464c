/**
 * `steward run`: work on a session. Interactive on a terminal; when stdin is not a terminal
 * (or with --auto) it plays the user — approves every step, accepts every artifact — and
 * prints the transcript, which makes `npm start < /dev/null` a complete demo.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { SessionNotFoundError } from '../../core/errors.js';
import { DemoModel } from '../../models/demo-model.js';
import { loadStatelyConfig } from '../../inspect/config.js';
import type { Inspection } from '../../inspect/index.js';
import { autopilot, DEMO_REQUEST } from '../autopilot.js';
import { editInEditor, editorCommand } from '../editor.js';
import { LiveLine } from '../live-line.js';
import { DEFAULT_PACKAGE, packageForNewSession } from '../package-choice.js';
import { isPostgresUrl } from '../../store/open-store.js';
import {
  actorName,
  CliError,
  cliCommand,
  collect,
  readTextOption,
  resolveDbPath,
  resumeCommand,
  maxBurstArgument,
  wholeNumber,
  withContext,
  sessionIdArgument,
} from '../context.js';
import type { CliIo } from '../io.js';
import { layoutsDir } from '../layouts-dir.js';
import { colorsFor } from '../colors.js';
import type { ExitStatus } from '../exit-status.js';
import { onStopSignal } from '../signals.js';
import { setOwn } from '../../core/blackboard/keyed.js';

interface RunFlags {
  package?: string;
  session?: string;
  request?: string;
  requestFile?: string;
  auto?: boolean;
  maxBurst?: number;
  maxBurstTokens?: number;
  toolVar?: string[];
  inspect?: string;
}

/** `--tool-var NAME=VALUE` pairs as createSession's toolVariables. */
function toolVariablesOf(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs?.length) return undefined;
  const variables: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError('usage', `--tool-var takes NAME=VALUE (e.g. STEWARD_FILES_DIR=/srv/notes); got "${pair.slice(0, 60)}".`);
    setOwn(variables, pair.slice(0, eq), pair.slice(eq + 1));
  }
  return variables;
}

/** No inspector: nothing to attach or stop. */
const noInspection: Inspection = { attach: async () => undefined, stop: async () => {} };

/**
 * The inspect mode wired for this run. The inspector's modules (hono, ws, @statelyai/inspect)
 * are loaded only when a mode other than off asks for them, not with the CLI.
 */
async function inspectionOf(mode: string, io: CliIo): Promise<Inspection> {
  if (mode === 'off') return noInspection;
  const { parseInspectMode, setupInspection } = await import('../../inspect/index.js');
  return setupInspection(parseInspectMode(mode), (msg) => io.stderr.write(`${msg}\n`));
}

export function register(program: Command, io: CliIo, status: ExitStatus): void {
  program
    .command('run')
    .description('work on a session: see what it waits for and answer (interactive on a terminal)')
    .option('-p, --package <id>', `the skill package of a new session (default: the one package of your --packages folders, else ${DEFAULT_PACKAGE})`)
    .option('-s, --session <id>', 'continue this session instead of creating one', sessionIdArgument('--session'))
    .option('--request <text>', 'the first request ("-" reads it from stdin; without a terminal: a fixed demo request)')
    .option('--request-file <file>', 'read the first request from this file')
    .option('--auto', 'never ask: approve every step, accept every artifact, stop at a tool call (the default when stdin is not a terminal)')
    .option('--max-burst <n>', 'model rounds allowed between two user actions, for a new session (default 12)', maxBurstArgument)
    .option(
      '--max-burst-tokens <n>',
      'tokens (as the model reports them) allowed between two user actions, for a new session (default: no budget)',
      wholeNumber(1),
    )
    .option(
      '--tool-var <name=value>',
      "a new session's value for its MCP servers' ${NAME} (repeatable), e.g. STEWARD_FILES_DIR=/srv/notes for the file-notes package; kept with the session",
      collect,
    )
    .option(
      '--inspect <mode>',
      'off | local (the inspector page) | stately (a Stately inspector link) | ws://HOST:PORT (default: stately.config.json "inspect")',
    )
    .action(async (flags: RunFlags, command: Command) => {
      if (flags.session !== undefined) {
        const misplaced = (['package', 'maxBurst', 'maxBurstTokens', 'toolVar'] as const).filter((o) => command.getOptionValueSource(o) === 'cli');
        if (misplaced.length) {
          const flagOf = { package: '--package', maxBurst: '--max-burst', maxBurstTokens: '--max-burst-tokens', toolVar: '--tool-var' } as const;
          const names = misplaced.map((o) => flagOf[o]).join(' and ');
          throw new CliError(
            'usage',
            `${names} ${misplaced.length > 1 ? 'apply' : 'applies'} only to a new session; session "${flags.session}" keeps its own.`,
          );
        }
      }
      const request = await readTextOption(io, 'request', flags.request, flags.requestFile);
      const toolVariables = toolVariablesOf(flags.toolVar);
      const globals = command.optsWithGlobals();
      const dbPath = resolveDbPath(globals, io);
      // Decided before the store opens (and the inspector starts), so a refusal leaves no database file.
      if (flags.session !== undefined && !isPostgresUrl(dbPath) && !existsSync(dbPath)) throw new SessionNotFoundError(flags.session, dbPath);
      const packageId =
        flags.session === undefined
          ? packageForNewSession(flags.package, globals, { verb: 'run', command: (args) => cliCommand(args, dbPath, io), env: io.env, cwd: io.cwd })
          : DEFAULT_PACKAGE;
      // Interactive prompts take the process's terminal (clack and the editor use it): only when
      // the command runs on that terminal, never for a command run inside another program.
      const auto = flags.auto === true || !io.stdin.isTTY || io.stdin !== process.stdin;
      // Loaded only on a terminal (scripts never pay for the prompt library), and before the
      // session starts, so a resumed model call is shown with its spinner from the start.
      const { interactive } = auto ? { interactive: undefined } : await import('../interactive.js');
      const { config } = loadStatelyConfig(io.cwd);
      const inspection = await inspectionOf(flags.inspect ?? config.inspect, io);
      await withContext(
        globals,
        io,
        async (ctx) => {
          const session =
            flags.session !== undefined
              ? await ctx.runtime.resumeSession(flags.session)
              : await ctx.runtime.createSession({
                  packageId,
                  ...(flags.maxBurst !== undefined ? { maxBurst: flags.maxBurst } : {}),
                  ...(flags.maxBurstTokens !== undefined ? { maxBurstTokens: flags.maxBurstTokens } : {}),
                  ...(toolVariables ? { toolVariables } : {}),
                });
          // The session matters more than the port: a busy configured port falls back to a free one.
          const layouts = layoutsDir(io.env);
          const pageOptions = { ...config.inspector, ...(layouts ? { layoutsDir: layouts } : {}) };
          const page = await inspection.attach(ctx.runtime, ctx.store, session.id, pageOptions).catch(async (error: unknown) => {
            if (!(error instanceof Error && / is in use/.test(error.message))) throw error;
            io.stderr.write(`${error.message} Using a free port instead.\n`);
            return inspection.attach(ctx.runtime, ctx.store, session.id, { ...pageOptions, port: 0 });
          });
          if (page) io.stderr.write(`Inspector: ${page.url}\n`);
          const resume = resumeCommand(session.id, ctx.dbPath, io);
          const by = actorName(command.optsWithGlobals());
          const common = {
            modelLabel: ctx.model.label,
            packages: ctx.runtime.packages,
            resume,
            command: (args: string) => cliCommand(args, ctx.dbPath, io),
            ...(by !== undefined ? { by } : {}),
          };

          if (!interactive) {
            // A signal stops the process (Ctrl+C in its terminal), whoever runs the command: the process ends, as before.
            const offSignals = onStopSignal(() => {
              io.stderr.write(`\nInterrupted. The session is saved; continue it with:\n  ${resume}\n`);
              // Closed, not only stopped: its lease (PostgreSQL) is given back, so it can be resumed at once.
              const exit = () => process.exit(130);
              setTimeout(exit, 2000).unref();
              void session.close().finally(exit);
            });
            try {
              io.stdout.write(`Steward · session ${session.id} · package ${session.view().packageId ?? '(to choose)'} · model: ${ctx.model.label}\n`);
              io.stdout.write('Not a terminal (or --auto): approving every step and accepting every artifact.\n');
              const live = io.stdout.isTTY ? { live: new LiveLine(io.stdout) } : {};
              const output = { colors: colorsFor(io), write: (text: string) => io.stdout.write(`${text}\n`), warn: (text: string) => io.stderr.write(text) };
              status.exitCode = await autopilot(session, { ...common, ...live, ...output, request: request ?? DEMO_REQUEST, packageId });
            } finally {
              offSignals();
            }
          } else {
            status.exitCode = await interactive(session, {
              ...common,
              isDemoModel: ctx.model instanceof DemoModel,
              runtime: ctx.runtime,
              ...(editorCommand(io.env) ? { editText: (text: string, name: string) => editInEditor(editorCommand(io.env)!, text, name) } : {}),
              ...(request !== undefined ? { request } : {}),
            });
          }
        },
        { command: 'run', ...(inspection.inspect ? { inspect: inspection.inspect } : {}) },
      ).finally(() => inspection.stop());
    });
}
