/** `steward new`: creates a session and prints its id (or its view with --json). */
import type { Command } from 'commander';
import { cliCommand, maxBurstArgument, printJson, resolveDbPath, viewJson, wholeNumber, withContext } from '../context.js';
import { DEFAULT_PACKAGE, packageForNewSession } from '../package-choice.js';
import type { CliIo } from '../io.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('new')
    .description('create a session and print its id')
    .option('-p, --package <id>', `the skill package (see \`steward packages\`; default: the one package of your --packages folders, else ${DEFAULT_PACKAGE})`)
    .option('--no-package', 'let the user choose the package first (the session starts in skill_selection)')
    .option('--max-burst <n>', 'model rounds allowed between two user actions (default 12)', maxBurstArgument)
    .option('--max-burst-tokens <n>', 'tokens (as the model reports them) allowed between two user actions (default: no budget)', wholeNumber(1))
    .option('--json', 'print the session view as JSON')
    .action(async (options: { package?: string | false; maxBurst?: number; maxBurstTokens?: number; json?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals();
      // Before the store opens: a command refused for its package creates no database file.
      const packageId =
        options.package === false
          ? undefined
          : packageForNewSession(options.package, globals, {
              verb: 'new',
              command: (args) => cliCommand(args, resolveDbPath(globals, io), io),
              env: io.env,
              cwd: io.cwd,
            });
      await withContext(
        globals,
        io,
        async (ctx) => {
          const session = await ctx.runtime.createSession({
            ...(packageId !== undefined ? { packageId } : {}),
            ...(options.maxBurst !== undefined ? { maxBurst: options.maxBurst } : {}),
            ...(options.maxBurstTokens !== undefined ? { maxBurstTokens: options.maxBurstTokens } : {}),
          });
          if (options.json) printJson(io, viewJson(session.view(), session.revision));
          else io.stdout.write(`${session.id}\n`);
        },
        { readOnly: true },
      );
    });
}
