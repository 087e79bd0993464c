/**
 * `steward upgrade ID [--to current]`: moves a waiting session to the version of its package
 * on disk. Until then a session keeps running the package version it started on (pinned by
 * hash, kept in the store), whatever its folder holds now. Journalled as `package_upgraded`
 * with the hashes before and after; refused, nothing written, while the session runs or
 * when the wait in progress needs a worker or tag the new version no longer has.
 */
import type { Command } from 'commander';
import { actorName, CliError, peekSession, printJson, viewJson, withContext, sessionIdArgument } from '../context.js';
import { shortHash } from '../../skills/package-version.js';
import { safeLine } from '../../text/safe-text.js';
import type { CliIo } from '../io.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('upgrade')
    .description('move a waiting session to the version of its package on disk (sessions keep the version they started on until then)')
    .argument('<id>', 'the session to upgrade', sessionIdArgument('steward upgrade'))
    .option('--to <version>', 'the version to move to: "current", the package on disk (the only one for now)', 'current')
    .option('--json', 'print { from, to, changed } and the session view as JSON')
    .action(async (id: string, options: { to: string; json?: boolean }, command: Command) => {
      if (options.to !== 'current') throw new CliError('usage', `--to takes "current" (the package on disk), not ${JSON.stringify(options.to.slice(0, 40))}.`);
      const by = actorName(command.optsWithGlobals());
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          // Look first without starting anything: a session saved mid-turn must not have its model call run again here.
          const peek = await peekSession(ctx, id);
          if (peek.view.phase !== 'waiting_user')
            throw new CliError('user_error', `Session "${id}" is ${peek.view.state}: a session is upgraded while it waits for you. Nothing was changed.`);
          const session = await ctx.runtime.openSession(id);
          try {
            const upgraded = await ctx.runtime.upgradeSession(id, { to: 'current', ...(by !== undefined ? { by } : {}) });
            if (options.json) {
              printJson(io, { from: upgraded.from, to: upgraded.to, changed: upgraded.changed, view: viewJson(upgraded.view, session.revision) });
            } else if (!upgraded.changed) {
              io.stdout.write(`${safeLine(`Session ${id} already runs the package on disk (${shortHash(upgraded.to)}): nothing to do.`)}\n`);
            } else {
              const from = upgraded.from ? shortHash(upgraded.from) : '(not pinned)';
              io.stdout.write(`${safeLine(`Session ${id}: package ${upgraded.view.packageId ?? ''} ${from} → ${shortHash(upgraded.to)}.`)}\n`);
            }
          } finally {
            await session.close();
          }
        },
        { command: 'upgrade' },
      );
    });
}
