/**
 * `isInstance` and `error.name` in minified browser bundles, where esbuild renames every class
 * (`SessionNotFoundError` becomes `o`, and in a page that imports another error alone, that
 * one may be `o` too): each class names itself with a literal, so its name and its marker
 * survive. The copies of the error classes — the source as Node loads it, src/core/errors.ts
 * bundled, `steward/machine` bundled (it exports them), and one page per class that imports
 * that class alone — recognise each other's instances exactly as `instanceof` does within
 * one copy: a class recognises its own and its subclasses' instances from every copy, and no
 * unrelated class shares its marker.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as source from '../../src/core/errors.js';
import { browserBundle } from '../support/browser-bundle.js';
import { root } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

type Errors = typeof source;
type ErrorClassName = { [K in keyof Errors]: Errors[K] extends abstract new (...args: never[]) => Error ? K : never }[keyof Errors];

/** One instance of each exported class, built with a copy's own constructors. */
const make: Record<ErrorClassName, (e: Errors) => Error> = {
  StewardError: (e) => new e.StewardError('user_error', 'm'),
  InternalError: (e) => new e.InternalError('m'),
  UserError: (e) => new e.UserError('m'),
  EventRefusedError: (e) => new e.EventRefusedError('m', { eventType: 'x', state: 'done', accepted: [], enabled: [] }),
  PackageError: (e) => new e.PackageError('m'),
  ModelError: (e) => new e.ModelError('m'),
  ScriptMismatchError: (e) => new e.ScriptMismatchError('m'),
  SessionNotFoundError: (e) => new e.SessionNotFoundError('s_gone'),
  ConflictError: (e) => new e.ConflictError('m'),
  LeaseLostError: (e) => new e.LeaseLostError('s'),
  SessionLeasedError: (e) => new e.SessionLeasedError('s', null, null),
  SnapshotError: (e) => new e.SnapshotError('m'),
  TransitionTestError: (e) => new e.TransitionTestError('m'),
  MachineMismatchError: (e) => new e.MachineMismatchError('m', [], [], []),
  LimitExceededError: (e) => new e.LimitExceededError('m', 'userTextChars', 1, 2),
  StoreError: (e) => new e.StoreError('store_locked', 'm', '/tmp/x.db'),
  StoreUnavailableError: (e) => new e.StoreUnavailableError('other', 'postgres://db', 'm'),
  InvalidSessionIdError: (e) => new e.InvalidSessionIdError('m'),
  InvalidCursorError: (e) => new e.InvalidCursorError('m'),
  RequestError: (e) => new e.RequestError('invalid_request', 'm', 400),
};
const names = Object.keys(make) as ErrorClassName[];

const tmp = useTempDir('steward-errors-bundle-');
/** Each copy of the classes; a page's copy has one class (and, unexported, its bases). */
const copies: Record<string, Partial<Errors>> = { source };

/** `module` bundled by esbuild, minified for the browser, and loaded. */
async function minified(module: { entry: string } | { stdin: string }, file: string): Promise<Partial<Errors>> {
  const { code, reached } = await browserBundle(module, { absWorkingDir: root });
  expect(reached).toEqual([]);
  writeFileSync(tmp.path(file), code);
  return (await import(pathToFileURL(tmp.path(file)).href)) as Partial<Errors>;
}

beforeAll(async () => {
  copies['errors bundle'] = await minified({ entry: join(root, 'src/core/errors.ts') }, 'errors.min.mjs');
  copies['machine bundle'] = await minified({ entry: join(root, 'src/machine.ts') }, 'machine.min.mjs');
  for (const name of names) copies[`${name} page`] = await minified({ stdin: `export { ${name} } from './src/core/errors.ts';` }, `${name}.min.mjs`);
}, 120_000);

/** Each copy's classes (name → class) and one instance per class. */
function each(): { copy: string; classes: [ErrorClassName, Errors[ErrorClassName]][]; instances: [ErrorClassName, Error][] }[] {
  return Object.entries(copies).map(([copy, errors]) => {
    const present = names.filter((name) => errors[name] !== undefined);
    return {
      copy,
      classes: present.map((name) => [name, errors[name]!] as [ErrorClassName, Errors[ErrorClassName]]),
      instances: present.map((name) => [name, make[name](errors as Errors)] as [ErrorClassName, Error]),
    };
  });
}

describe('the error classes in minified bundles', () => {
  it('every exported error class is in the table above', () => {
    const exported = Object.entries(source).filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error);
    expect(exported.map(([name]) => name).sort()).toEqual([...names].sort());
  });

  it('esbuild renamed the classes (else this test proves nothing)', () => {
    const bundled = copies['errors bundle']!;
    expect(names.filter((name) => (bundled[name] as { name: string }).name === name)).toEqual([]);
  });

  it("keeps each error's name", () => {
    for (const { copy, instances } of each()) {
      expect(
        instances.map(([, error]) => error.name),
        copy,
      ).toEqual(instances.map(([name]) => name));
    }
  });

  /** Every answer of isInstance that differs from instanceof within one copy, across every pair of copies. */
  function wrongAnswers(expected: boolean): string[] {
    const copiesNow = each();
    return copiesNow.flatMap(({ copy: classCopy, classes }) =>
      copiesNow.flatMap(({ copy: instanceCopy, instances }) =>
        classes.flatMap(([cls, Class]) =>
          instances
            .filter(([of, error]) => make[of](source) instanceof source[cls] === expected && Class.isInstance(error) !== expected)
            .map(([of]) => `${classCopy}'s ${cls}.isInstance(${instanceCopy}'s ${of})`),
        ),
      ),
    );
  }

  it("no class recognises an unrelated class's instance, from any copy (two classes, one marker)", () => {
    expect(wrongAnswers(false)).toEqual([]);
  });

  it("each class recognises its own and its subclasses' instances, from every copy", () => {
    expect(wrongAnswers(true)).toEqual([]);
  });

  it('EventRefusedError.isInstance(a SessionNotFoundError) is false, SessionNotFoundError.isInstance true, from every copy', () => {
    for (const { classes } of each()) {
      for (const { instances } of each()) {
        const [, notFound] = instances.find(([name]) => name === 'SessionNotFoundError') ?? [];
        if (!notFound) continue;
        const refused = classes.find(([name]) => name === 'EventRefusedError')?.[1];
        const notFoundClass = classes.find(([name]) => name === 'SessionNotFoundError')?.[1];
        if (refused) expect(refused.isInstance(notFound)).toBe(false);
        if (notFoundClass) expect(notFoundClass.isInstance(notFound)).toBe(true);
      }
    }
  });
});

/** Every `class X extends Y {` in src/: X → Y and X's body. */
function subclassesInSrc(): Map<string, { base: string; text: string }> {
  const found = new Map<string, { base: string; text: string }>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const m of text.matchAll(/class (\w+) extends (\w+)[^{]*\{/g))
          found.set(m[1]!, { base: m[2]!, text: text.slice(m.index, text.indexOf('\n}', m.index)) });
      }
    }
  };
  walk(join(root, 'src'));
  return found;
}

it("every subclass of StewardError in src/ names itself with a literal (a minified bundle's class name is not its own)", () => {
  const classes = subclassesInSrc();
  const isSteward = (name: string): boolean => name === 'StewardError' || (classes.has(name) && isSteward(classes.get(name)!.base));
  const ours = [...classes.keys()].filter((name) => name !== 'StewardError' && isSteward(name));
  expect(ours).toEqual(
    expect.arrayContaining(['HttpError', 'CliError', 'TooManyStreamsError', 'TokenListError', ...names.filter((n) => n !== 'StewardError')]),
  );
  const unnamed = ours.filter((name) => !classes.get(name)!.text.includes(`static override readonly errorName: string = '${name}';`));
  expect(unnamed).toEqual([]);
});
