/** `steward init-package NAME`: writes a starter skill package to edit into your own. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { PackageError } from '../../errors.js';
import { loadPackage } from '../../skills/loader.js';
import { ID_PATTERN } from '../../skills/package-schema.js';
import { starterPackageFiles } from '../../skills/starter-package.js';
import { defaultDbPath } from '../../store/sqlite-store.js';
import { cliCommand, shellQuote } from '../context.js';

export function register(program: Command): void {
  program
    .command('init-package')
    .description('write a starter skill package (a manifest and two commented worker files) to edit into your own')
    .argument('<name>', 'the package id: lowercase letters, digits, "-" or "_", starting with a letter')
    .option('--dir <dir>', 'the folder of package folders to write it in (created if missing)', 'packages')
    .action((name: string, options: { dir: string }) => {
      if (!ID_PATTERN.test(name)) {
        throw new PackageError(
          `"${name.slice(0, 60)}" is not a package id; use lowercase letters, digits, "-" or "_", starting with a letter, e.g. code-review.`,
        );
      }
      const root = resolve(options.dir);
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
      // The store plays no part in listing packages: the command is shown without --db.
      const list = cliCommand(`packages --packages ${shellQuote(options.dir)}`, defaultDbPath({}));
      process.stdout.write(`Wrote the starter package ${folder}/ (manifest.json, workers/researcher.md, workers/writer.md).\n`);
      process.stdout.write(`Edit them, then check it with: ${list}\n`);
    });
}
