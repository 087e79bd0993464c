/**
 * `steward init-package NAME`: writes a starter skill package to edit into your own, and lists
 * its folder in stately.config.json so that the next command knows it (`--no-config`: not).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { PackageError } from '../../core/errors.js';
import { loadPackage } from '../../skills/loader.js';
import { ID_PATTERN } from '../../core/skills/package-schema.js';
import { starterPackageFiles } from '../../skills/starter-package.js';
import { defaultDbPath } from '../../store/sqlite-store.js';
import { safeText } from '../../text/safe-text.js';
import { cliCommand, shellQuote } from '../context.js';
import { loadStatelyConfig } from '../../inspect/config.js';
import { listPackagesFolder } from '../packages-config.js';
import type { CliIo } from '../io.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('init-package')
    .description('write a starter skill package (a manifest and two commented worker files) to edit into your own')
    .argument('<name>', 'the package id: lowercase letters, digits, "-" or "_", starting with a letter')
    .option('--dir <dir>', 'the folder of package folders to write it in (created if missing)', 'packages')
    .option('--no-config', 'leave stately.config.json alone (then name the folder with --packages DIR in every command)')
    .action((name: string, options: { dir: string; config: boolean }) => {
      if (!ID_PATTERN.test(name)) {
        throw new PackageError(
          `"${name.slice(0, 60)}" is not a package id; use lowercase letters, digits, "-" or "_", starting with a letter, e.g. code-review.`,
        );
      }
      // A broken config is refused before anything is written.
      if (options.config) loadStatelyConfig(io.cwd);
      const root = resolve(io.cwd, options.dir);
      const folder = join(root, name);
      mkdirSync(root, { recursive: true });
      try {
        mkdirSync(folder);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        throw new PackageError(`${folder} already exists; choose another name, or remove the folder first.`);
      }
      for (const [path, text] of Object.entries(starterPackageFiles(name))) {
        mkdirSync(dirname(join(folder, path)), { recursive: true });
        writeFileSync(join(folder, path), text, { flag: 'wx' });
      }
      loadPackage(folder);
      // The folder and the working directory are names a person chose: printed as data.
      const say = (text: string) => io.stdout.write(safeText(text));
      say(`Wrote the starter package ${folder}/ (manifest.json, workers/researcher.md, workers/writer.md).\n`);
      let packagesFlag = ` --packages ${shellQuote(options.dir)}`;
      if (options.config) {
        const listed = listPackagesFolder(root, io.cwd);
        const where = `"packages" of ${listed.path}${listed.created ? ' (a new file)' : ''}`;
        say(listed.added ? `Listed ${listed.entry} in ${where}: ` : `${listed.path} lists ${listed.entry} already: `);
        if (io.env.STEWARD_PACKAGES?.trim()) {
          say(`but STEWARD_PACKAGES is set, and commands read it instead: add ${root} to it, or name the folder with --packages.\n`);
        } else {
          say(`every steward command run in ${io.cwd} loads it.\n`);
          packagesFlag = '';
        }
      }
      // The store plays no part in listing packages: the commands are shown without --db.
      const command = (args: string) => cliCommand(args, defaultDbPath({}, io.cwd), io);
      say(`Edit its files, then check it with: ${command(`packages${packagesFlag}`)}\n`);
      say(`Start a session of it with: ${command(`run --package ${name}${packagesFlag}`)}\n`);
    });
}
