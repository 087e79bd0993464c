/** `steward packages`: the skill packages and their workers, with the tags they read and write. */
import type { Command } from 'commander';
import { packageInfo } from '../../runtime/runtime.js';
import { loadPackages } from '../../skills/index.js';
import { printJson } from '../context.js';
import { packagesDirs } from '../packages-option.js';
import { formatPackages } from '../render.js';
import type { CliIo } from '../io.js';
import { colorsFor } from '../colors.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('packages')
    .description('list the skill packages and their workers (input → output tags)')
    .option('--json', 'print the packages as JSON')
    .action((options: { json?: boolean }, command: Command) => {
      const packages = loadPackages(packagesDirs(command.optsWithGlobals(), io.env, io.cwd));
      if (options.json)
        printJson(
          io,
          [...packages.values()].map((pkg) => packageInfo(pkg)),
        );
      else io.stdout.write(`${formatPackages(packages, colorsFor(io))}\n`);
    });
}
