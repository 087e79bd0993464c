/**
 * Which skill package a new session of `steward run` / `steward new` gets, decided before
 * the store opens: a command refused for its package leaves no database file behind.
 * Without `--package`, a person who named a folder of their own packages means theirs: the
 * one package it holds, or a refusal that lists them when it holds several; with no folder
 * of their own, the bundled short-story.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { StewardError } from '../core/errors.js';
import { bundledPackagesDir, loadPackages } from '../skills/index.js';
import { show } from '../skills/loader.js';
import { ID_PATTERN } from '../core/skills/package-schema.js';
import { shellQuote } from './context.js';
import { checkedUserPackagesDirs, type PackagesOptions, type UserPackagesDirs } from './packages-option.js';

/** The package of a new session when no folder of your own is named. */
export const DEFAULT_PACKAGE = 'short-story';

/**
 * `--package ID` names no package that loads; the message names where packages come from
 * and, when a folder under the working directory holds one of that id, the command that loads it.
 */
export class UnknownPackageError extends StewardError {
  static override readonly errorName: string = 'UnknownPackageError';
  constructor(
    readonly packageId: string,
    readonly known: readonly string[],
    readonly hint: string,
  ) {
    super('user_error', `Unknown package "${packageId.slice(0, 60)}". Packages: ${known.join(', ')}. ${hint}`);
  }
}

/** Your folders hold several packages and `--package` chose none of them. */
export class AmbiguousPackageError extends StewardError {
  static override readonly errorName: string = 'AmbiguousPackageError';
  constructor(
    readonly source: string,
    readonly candidates: readonly string[],
    example: string,
  ) {
    super('usage', `${source} hold ${candidates.length} packages (${candidates.join(', ')}): choose one with --package, e.g. ${example}.`);
  }
}

export interface PackageChoice {
  /** The command the hints show, e.g. `(args) => cliCommand(args, dbPath)`. */
  command: (args: string) => string;
  /** `run` or `new`, for the hints. */
  verb: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The package id a new session gets: `requested` when it loads, else your only package,
 * else short-story. Loads the packages (a broken one is refused here, as the runtime would).
 *
 * @example
 * const packageId = packageForNewSession(flags.package, command.optsWithGlobals(), { verb: 'run', command: (a) => `steward ${a}`, env: process.env, cwd: process.cwd() });
 */
export function packageForNewSession(requested: string | undefined, options: PackagesOptions, choice: PackageChoice): string {
  const { cwd } = choice;
  const user = checkedUserPackagesDirs(options, choice.env, cwd);
  const packages = loadPackages(user ? [bundledPackagesDir, ...user.dirs] : bundledPackagesDir);
  if (requested !== undefined) {
    if (packages.has(requested)) return requested;
    throw new UnknownPackageError(requested, [...packages.keys()], unknownHint(requested, choice, cwd));
  }
  if (!user) return DEFAULT_PACKAGE;
  const own = [...packages.values()].filter((pkg) => user.dirs.some((dir) => isInside(pkg.dir, dir))).map((pkg) => pkg.id);
  if (own.length === 1) return own[0]!;
  if (own.length === 0) return DEFAULT_PACKAGE;
  throw new AmbiguousPackageError(describe(user, cwd), own, choice.command(`${choice.verb} --package ${own[0]}${flagPart(user, cwd)}`));
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep);
}

function describe(user: UserPackagesDirs, cwd: string): string {
  return `The packages folders of ${user.source} (${user.dirs.map((dir) => show(dir, cwd)).join(', ')})`;
}

/** The `--packages` part of a command to paste: only when the folders came from the flag. */
function flagPart(user: UserPackagesDirs, cwd: string): string {
  return user.source === '--packages' ? user.dirs.map((dir) => ` --packages ${shellQuote(show(dir, cwd))}`).join('') : '';
}

function unknownHint(id: string, choice: PackageChoice, cwd: string): string {
  const holder = ID_PATTERN.test(id) ? folderHolding(id, cwd) : undefined;
  if (holder !== undefined) {
    return (
      `${show(join(holder, id), cwd)} holds a package folder of that name: load its folder with ` +
      `${choice.command(`${choice.verb} --package ${id} --packages ${shellQuote(show(holder, cwd))}`)}, ` +
      'or list it in "packages" of stately.config.json (steward init-package does) so that every command loads it.'
    );
  }
  return (
    'Packages of your own load from the folder that holds their folders: --packages DIR, STEWARD_PACKAGES, ' +
    'or "packages" in stately.config.json (`steward packages` lists what loads).'
  );
}

/** A folder directly under `cwd` with `<id>/manifest.json` in it (where init-package writes). */
function folderHolding(id: string, cwd: string): string | undefined {
  let entries;
  try {
    entries = readdirSync(cwd, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const folders = entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules');
  return folders.map((entry) => join(cwd, entry.name)).find((dir) => existsSync(join(dir, id, 'manifest.json')));
}
