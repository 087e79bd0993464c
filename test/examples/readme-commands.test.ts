/**
 * The shell lines of each example's README, checked the way a person pasting them would
 * find out: `npm pack` in the repository is refused by its `prepack` (the tarball comes from
 * `npm run package`), an `npm run X` needs the script X in the folder it runs in, and
 * `steward serve` refuses a STEWARD_TOKEN shorter than a secret.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIN_TOKEN_CHARS } from '../../src/http/tokens.js';
import { root } from '../support/cli-process.js';

function scriptsOf(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return Object.keys(manifest.scripts ?? {});
}

/** The lines of the README's sh code blocks, comments left out. */
function shellLines(readme: string): string[] {
  const blocks = [...readme.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  return blocks.flatMap((block) => block.split('\n').map((line) => line.replace(/(^|\s)#.*$/, '').trim())).filter(Boolean);
}

/** What is wrong with one line run in `dir`; `(cd ../.. && …)` runs in the repository. */
function problemsOf(line: string, dir: string): string[] {
  const inRoot = /^\(cd \.\.\/\.\. && (.*)\)$/.exec(line);
  const [commands, cwd] = inRoot ? [inRoot[1]!, root] : [line, dir];
  return commands.split('&&').flatMap((command) => {
    const problems: string[] = [];
    if (/\bnpm pack\b/.test(command) && cwd === root) problems.push(`${command.trim()}: the repository's prepack refuses it (npm run package)`);
    const script = /\bnpm (?:run(?:-script)? (\S+)|(start|test))\b/.exec(command);
    const name = script?.[1] ?? script?.[2];
    if (name !== undefined && !scriptsOf(cwd).includes(name)) problems.push(`${command.trim()}: no script "${name}" in ${cwd}`);
    const token = /\bSTEWARD_TOKEN=([^\s$"']+)/.exec(command);
    if (token && token[1]!.length < MIN_TOKEN_CHARS) problems.push(`${command.trim()}: steward serve refuses a token under ${MIN_TOKEN_CHARS} characters`);
    return problems;
  });
}

const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe("the examples' READMEs", () => {
  it.each(examples)('examples/%s: every shell line runs as written', (name) => {
    const dir = join(root, 'examples', name);
    const lines = shellLines(readFileSync(join(dir, 'README.md'), 'utf8'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.flatMap((line) => problemsOf(line, dir))).toEqual([]);
  });
});
