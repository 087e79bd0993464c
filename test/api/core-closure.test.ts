/**
 * The browser-safe core is one folder, src/core, and `steward/machine` (src/machine.ts) is
 * built from it alone: the whole import closure of every file there — type-only imports
 * too, since the published declarations must compile in a DOM-only project — stays inside
 * src/core and reaches no Node built-in and no package but the few a browser bundle takes.
 * Everything else (runtime, store, CLI, serve…) imports the core, never the reverse.
 * Imports are read with TypeScript's parser and resolved with its module resolution.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { root } from '../support/cli-process.js';

const CORE = join(root, 'src/core');
// What the chart, its schemas and its updates are made of; each bundles for a browser.
const PACKAGES = new Set(['xstate', 'zod', 'immer']);

const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };

/** Every module specifier `file` names: import and export declarations, `import()` calls and `import('…')` types. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push(node.moduleSpecifier.text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      found.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const show = (file: string) => relative(root, file);

/**
 * Walks the import closure of `roots` and lists what breaks the rule: a file outside
 * `folder`, a Node built-in, a package not in PACKAGES, a specifier that resolves to nothing.
 * Each problem names the file that imports it.
 */
function closureProblems(roots: string[], folder: string): { files: string[]; problems: string[] } {
  const seen = new Set<string>();
  const problems: string[] = [];
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of specifiersOf(file)) {
      const where = `${show(file)} imports '${specifier}'`;
      if (isBuiltin(specifier)) {
        problems.push(`${where}: a Node built-in`);
        continue;
      }
      const resolved = ts.resolveModuleName(specifier, file, options, ts.sys).resolvedModule;
      if (!resolved) problems.push(`${where}: resolves to nothing`);
      else if (resolved.isExternalLibraryImport) {
        if (!PACKAGES.has(packageOf(specifier))) problems.push(`${where}: a package the core does not use (allowed: ${[...PACKAGES].join(', ')})`);
      } else if (!resolved.resolvedFileName.startsWith(`${folder}/`)) problems.push(`${where}: ${show(resolved.resolvedFileName)} is outside ${show(folder)}`);
      else queue.push(resolved.resolvedFileName);
    }
  }
  return { files: [...seen], problems };
}

const coreFiles = readdirSync(CORE, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts'))
  .map((name) => join(CORE, name));

it('src/core and steward/machine import nothing outside src/core but xstate, zod and immer', () => {
  const { files, problems } = closureProblems([join(root, 'src/machine.ts'), ...coreFiles], CORE);
  expect(problems).toEqual([]);
  // The walk went through the chart itself, not just the file names it started from.
  expect(files).toContain(join(CORE, 'machines/session.machine.ts'));
  expect(coreFiles.length).toBeGreaterThan(20);
});

it('the check sees a file outside the folder, a Node built-in and another package', () => {
  // The stream reader of steward/client imports the core, which is allowed, and more, which the core may not.
  const { problems } = closureProblems([join(root, 'src/client/stream.ts'), join(root, 'src/store/lease-keeper.ts')], CORE);
  expect(problems).toEqual(
    expect.arrayContaining([
      "src/client/stream.ts imports '../store/records.js': src/store/records.ts is outside src/core",
      "src/client/stream.ts imports 'eventsource-parser': a package the core does not use (allowed: xstate, zod, immer)",
      "src/store/lease-keeper.ts imports 'node:os': a Node built-in",
    ]),
  );
  expect(problems.filter((p) => p.includes("'../core/"))).toEqual([]);
});
