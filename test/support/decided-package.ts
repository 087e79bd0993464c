/**
 * The bundled tiny package, copied into `dir`, its worker decided by `group` alone (front
 * matter `approvers`: its steps and tool calls; with `reviewers` too, its artifacts): a package
 * whose waits name their deciders.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundledPackagesDir } from '../../src/skills/index.js';

/** Writes the package under `dir` and returns `dir`, the packages folder to load. */
export function tinyDecidedBy(dir: string, group: string, fields: readonly ('approvers' | 'reviewers')[] = ['approvers']): string {
  cpSync(join(bundledPackagesDir, 'tiny'), join(dir, 'tiny'), { recursive: true });
  const echo = join(dir, 'tiny', 'workers', 'echo.md');
  const text = readFileSync(echo, 'utf8');
  if (!text.includes('outputTags: [note]\n')) throw new Error('the tiny package changed: its echo worker no longer says "outputTags: [note]"');
  writeFileSync(echo, text.replace('outputTags: [note]\n', `outputTags: [note]\n${fields.map((f) => `${f}: [${group}]\n`).join('')}`));
  return dir;
}
