/**
 * Loads @xstate/machine-extractor — what the Stately VS Code extension and Studio's import use
 * to read a machine from its source — next to the xstate 4 it needs at run time. It declares
 * xstate 4 as a peer and requires `xstate/lib/*`, while Steward runs xstate 5; so the package is
 * copied into a scratch folder under node_modules/.cache whose own `xstate` is the
 * `xstate4` alias (npm:xstate@4.38.3). Everything else resolves from the repository's
 * node_modules. No network.
 */
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ExtractedMachine {
  toConfig(): Record<string, unknown> | null;
}

export function loadMachineExtractor(): { extractMachinesFromFile(source: string): { machines: ExtractedMachine[] } | null } {
  const real = createRequire(join(root, 'package.json'));
  const extractorDir = dirname(real.resolve('@xstate/machine-extractor/package.json'));
  const xstate4Dir = dirname(real.resolve('xstate4/package.json'));
  const scratch = join(root, 'node_modules', '.cache', 'steward-machine-extractor');
  const modules = join(scratch, 'node_modules');
  if (!existsSync(join(modules, 'xstate'))) {
    mkdirSync(join(modules, '@xstate'), { recursive: true });
    cpSync(extractorDir, join(modules, '@xstate', 'machine-extractor'), { recursive: true, dereference: true });
    symlinkSync(xstate4Dir, join(modules, 'xstate'), 'dir');
  }
  return createRequire(join(scratch, 'package.json'))('@xstate/machine-extractor');
}
