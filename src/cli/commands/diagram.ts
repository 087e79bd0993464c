/**
 * `steward diagram`: the statechart as text — Mermaid (stateDiagram-v2, the default), DOT
 * or JSON — with every state and every transition labelled `event [guard]`. The machines
 * come from stately.config.json (default: the session machine).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { loadMachine, loadStatelyConfig } from '../../inspect/config.js';
import { diagramFormats, renderDiagram, type DiagramFormat } from '../../inspect/diagram.js';
import { CliError } from '../context.js';
import type { CliIo } from '../io.js';

interface DiagramFlags {
  format: DiagramFormat;
  out?: string;
  machine?: string;
}

export function register(program: Command, io: CliIo): void {
  program
    .command('diagram')
    .description('print the statechart as Mermaid, DOT or JSON (every state and transition)')
    .addOption(new Option('-f, --format <format>', 'output format').choices(diagramFormats).default('mermaid'))
    .option('-o, --out <file>', 'write to this file instead of stdout')
    .option('-m, --machine <name>', 'which machine of stately.config.json (default: the first one to draw)')
    .action(async (flags: DiagramFlags) => {
      const { config, dir, path } = loadStatelyConfig(io.cwd);
      const drawable = config.machines.filter((m) => m.draw);
      const entry = flags.machine !== undefined ? config.machines.find((m) => m.name === flags.machine) : drawable[0];
      if (!entry) {
        const names = config.machines.map((m) => m.name).join(', ');
        throw new CliError(
          'usage',
          flags.machine !== undefined
            ? `No machine "${flags.machine}" in ${path ?? 'the default configuration'}; machines: ${names}.`
            : `${path ?? 'The configuration'} has no machine with "draw": true; machines: ${names}.`,
        );
      }
      const machine = await loadMachine(entry.source, dir);
      const text = renderDiagram(machine, flags.format);
      if (flags.out) {
        const file = resolve(io.cwd, flags.out);
        writeFileSync(file, text);
        io.stderr.write(`Wrote ${flags.format} diagram of "${entry.name}" to ${file}\n`);
      } else {
        io.stdout.write(text);
      }
    });
}
