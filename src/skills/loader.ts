/**
 * Loads and validates skill packages from disk. Runs once at startup, so it uses sync fs
 * and reports every problem of a package at once (fixing one error per restart is slow).
 */
import { closeSync, constants, lstatSync, opendirSync, openSync, readFileSync, statSync } from 'node:fs';
import { DEFAULT_LIMITS } from '../core/limits.js';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { isSourceModule, stewardRoot } from '../package-root.js';
import type { z } from 'zod';
import { PackageError } from '../core/errors.js';
import { splitFrontMatter } from './front-matter.js';
import { parseFrontMatterYaml, YamlAliasRefusedError } from './front-matter-yaml.js';
import {
  PackageManifestSchema,
  REQUEST_TAG,
  WorkerFrontMatterSchema,
  type PackageManifest,
  type SkillPackage,
  type WorkerSkill,
} from '../core/skills/package-schema.js';

/** The packages shipped with Steward (`src/skills/packages`). */
export const bundledPackagesDir = join(stewardRoot(import.meta.url), isSourceModule(import.meta.url) ? 'src' : 'dist', 'skills', 'packages');

/**
 * Loads one package folder; throws a `PackageError` naming file, field and fix.
 *
 * @example
 * const pkg = loadPackage('./packages/my-team'); // a PackageError if anything is wrong
 * console.log(pkg.id, pkg.workers.map((w) => w.id));
 * const runtime = createRuntime({ model, packagesDir: './packages' });
 */
export function loadPackage(dir: string): SkillPackage {
  const packageDir = resolve(dir);
  if (!statSync(packageDir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new PackageError(`${show(packageDir)}: package folder not found.`);
  }
  const manifest = readManifest(packageDir);
  const workers = readWorkers(packageDir, manifest);
  const problems = [...checkChain(packageDir, manifest, workers), ...checkToolServers(packageDir, manifest, workers)];
  if (problems.length > 0) fail(packageDir, problems);
  return {
    id: manifest.id,
    title: manifest.title,
    description: manifest.description,
    workers,
    mcpServers: manifest.mcpServers ?? {},
    ...(manifest.deadlines ? { deadlines: manifest.deadlines } : {}),
    dir: packageDir,
  };
}

/** Every tool a worker names is of a server the manifest declares. */
function checkToolServers(packageDir: string, manifest: PackageManifest, workers: WorkerSkill[]): string[] {
  const declared = Object.keys(manifest.mcpServers ?? {});
  return workers.flatMap((worker) =>
    worker.tools
      .filter((ref) => !declared.includes(ref.slice(0, ref.indexOf('.'))))
      .map(
        (ref) =>
          `${show(join(packageDir, 'workers', `${worker.id}.md`))}: front matter field "tools" names "${ref}", but the manifest declares ` +
          `${declared.length ? `only the MCP servers ${declared.map((d) => `"${d}"`).join(', ')}` : 'no MCP servers'}; add the server to "mcpServers" in manifest.json or fix the name.`,
      ),
  );
}

function readManifest(packageDir: string): PackageManifest {
  const file = join(packageDir, 'manifest.json');
  const source = readText(file, 'every package needs one: { "schemaVersion": 1, "id", "title", "description", "workers" }');
  let raw: unknown;
  try {
    raw = JSON.parse(source);
  } catch (error) {
    throw new PackageError(`${show(file)}: not valid JSON (${(error as Error).message}); fix the syntax.`);
  }
  const parsed = PackageManifestSchema.safeParse(raw);
  if (!parsed.success) fail(packageDir, describeIssues(file, 'manifest', parsed.error, raw));
  const manifest = parsed.data;
  const folder = basename(packageDir);
  if (manifest.id !== folder) {
    fail(packageDir, [
      `${show(file)}: manifest field "id" must equal the folder name "${folder}" (got: "${manifest.id}"); rename the folder or change the id.`,
    ]);
  }
  return manifest;
}

/** Reads the worker files in manifest order; problems of all files are reported together. */
function readWorkers(packageDir: string, manifest: PackageManifest): WorkerSkill[] {
  const workersDir = join(packageDir, 'workers');
  const manifestFile = show(join(packageDir, 'manifest.json'));
  const problems: string[] = [];
  const workers: WorkerSkill[] = [];
  if (lstatSync(workersDir, { throwIfNoEntry: false })?.isSymbolicLink()) fail(packageDir, [symlinkProblem(workersDir)]);

  // A worker file the manifest does not list would silently never run: almost always a
  // forgotten manifest entry or a misspelt file name. Counted before any file is read.
  const listed = new Set(manifest.workers);
  for (const name of workerFileNames(packageDir, workersDir)) {
    const workerId = name.slice(0, -'.md'.length);
    if (!listed.has(workerId)) {
      problems.push(`${show(join(workersDir, name))}: worker "${workerId}" is not listed in ${manifestFile} field "workers"; add it there or delete the file.`);
    }
  }

  for (const workerId of manifest.workers) {
    const file = join(workersDir, `${workerId}.md`);
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) {
      problems.push(symlinkProblem(file));
      continue;
    }
    if (!stat?.isFile()) {
      problems.push(`${show(file)}: file not found, but ${manifestFile} lists worker "${workerId}" in field "workers"; create the file or remove the id.`);
      continue;
    }
    const result = readWorker(file, workerId);
    if (Array.isArray(result)) problems.push(...result);
    else workers.push(result);
  }

  if (problems.length > 0) fail(packageDir, problems);
  return workers;
}

/**
 * The `.md` names in `workers/`, sorted. Read one entry at a time and stopped past the
 * workersPerPackage limit, so a folder of a million files costs no more than 201 names.
 */
function workerFileNames(packageDir: string, workersDir: string): string[] {
  if (!statSync(workersDir, { throwIfNoEntry: false })?.isDirectory()) return [];
  const max = DEFAULT_LIMITS.workersPerPackage;
  const names: string[] = [];
  const folder = opendirSync(workersDir);
  try {
    for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) {
      if (!entry.name.endsWith('.md')) continue;
      names.push(entry.name);
      if (names.length > max) {
        fail(packageDir, [
          `${show(workersDir)}: holds more than ${max} .md files (the workersPerPackage limit); a package has ` +
            `at most ${max} workers, so delete the files its manifest does not list or split the package.`,
        ]);
      }
    }
  } finally {
    folder.closeSync();
  }
  return names.sort();
}

/** "yaml" for the languages the loader reads: none after the opening "---", "yml" or "yaml". */
function frontMatterLanguage(name: string): string {
  return name === '' || /^ya?ml$/i.test(name) ? 'yaml' : name;
}

/** Returns the worker, or the problems of its file. */
function readWorker(file: string, workerId: string): WorkerSkill | string[] {
  const source = readText(file, '');
  const where = show(file);
  const split = splitFrontMatter(source);
  if (!split) {
    return [
      `${where}: no YAML front matter; start the file with a "---" block holding id, title, description, inputTags and outputTags, then "---" and the prompt.`,
    ];
  }
  // A package is data: a language other than YAML ("---js", which some front matter readers
  // evaluate) is refused by name, and nothing of it is read.
  const language = frontMatterLanguage(split.language);
  if (language !== 'yaml') {
    return [
      `${where}: front matter language ${JSON.stringify(language.slice(0, 40))} is not allowed: Steward ` +
        `reads YAML front matter only and never runs package content; start the file with a plain "---" line ` +
        `and write the fields as YAML.`,
    ];
  }
  let data: unknown = {};
  try {
    if (!split.isEmpty) data = parseFrontMatterYaml(split.matter);
  } catch (error) {
    if (error instanceof YamlAliasRefusedError) {
      return [
        `${where}: the front matter uses a YAML ${error.detail}; YAML aliases are not allowed in front ` +
          `matter (a few lines of them expand to billions of values): write the value out and remove the "&" ` +
          `and "*" names.`,
      ];
    }
    return [`${where}: the front matter is not valid YAML (${firstLine((error as Error).message)}); fix the syntax.`];
  }

  const result = WorkerFrontMatterSchema.safeParse(data);
  const problems = result.success ? [] : describeIssues(file, 'front matter', result.error, data);
  if (result.success && result.data.id !== workerId) {
    problems.push(`${where}: front matter field "id" must equal the file name "${workerId}" (got: "${result.data.id}"); rename the file or change the id.`);
  }
  const prompt = split.body.trim();
  if (prompt === '') {
    problems.push(`${where}: the prompt is empty; write the worker's system prompt as Markdown below the closing "---" of the front matter.`);
  }
  if (!result.success || problems.length > 0) return problems;

  const fm = result.data;
  return {
    id: fm.id,
    title: fm.title,
    description: fm.description,
    inputTags: fm.inputTags,
    outputTags: fm.outputTags,
    roles: fm.roles ?? [],
    approval: fm.approval ?? 'model',
    tools: fm.tools ?? [],
    ...(fm.approvers ? { approvers: fm.approvers } : {}),
    ...(fm.reviewers ? { reviewers: fm.reviewers } : {}),
    ...(fm.deadlines ? { deadlines: fm.deadlines } : {}),
    prompt,
  };
}

/**
 * The tags must form a runnable chain: each tag has one writer, and every tag a worker
 * reads is `request` or written by a worker listed before it. Listing order is what the
 * manager sees, and requiring the producer first also rules out cycles, where no worker
 * of the loop could ever run first.
 */
function checkChain(packageDir: string, manifest: PackageManifest, workers: WorkerSkill[]): string[] {
  const problems: string[] = [];
  const fileOf = (w: WorkerSkill) => show(join(packageDir, 'workers', `${w.id}.md`));
  const writers = new Map<string, { worker: WorkerSkill; index: number }>();

  workers.forEach((worker, index) => {
    for (const tag of worker.outputTags) {
      const other = writers.get(tag);
      if (tag === REQUEST_TAG) {
        problems.push(
          `${fileOf(worker)}: front matter field "outputTags" must not contain "${REQUEST_TAG}": the runtime ` +
            `writes it from the user's input; pick another tag.`,
        );
      } else if (other) {
        problems.push(
          `${fileOf(worker)}: front matter field "outputTags" contains "${tag}", which worker ` +
            `"${other.worker.id}" already writes; each tag has exactly one writer, so rename one of them.`,
        );
      } else {
        writers.set(tag, { worker, index });
      }
    }
  });

  const written = [REQUEST_TAG, ...writers.keys()].map((t) => `"${t}"`).join(', ');
  workers.forEach((worker, index) => {
    for (const tag of worker.inputTags) {
      if (tag === REQUEST_TAG) continue;
      const writer = writers.get(tag);
      if (!writer) {
        problems.push(
          `${fileOf(worker)}: front matter field "inputTags" contains "${tag}", but no worker of package ` +
            `"${manifest.id}" writes it, so the chain is broken; use one of ${written} or add a worker whose ` +
            `outputTags contain "${tag}".`,
        );
      } else if (writer.worker === worker) {
        problems.push(
          `${fileOf(worker)}: front matter field "inputTags" contains "${tag}", which this worker writes ` +
            `itself, so it could never run first; remove it (a revising worker is shown its previous artifact ` +
            `anyway).`,
        );
      } else if (writer.index > index) {
        problems.push(
          `${show(join(packageDir, 'manifest.json'))}: manifest field "workers" lists "${worker.id}" before ` +
            `"${writer.worker.id}", but "${worker.id}" reads "${tag}", which "${writer.worker.id}" writes; list ` +
            `the workers in chain order.`,
        );
      }
    }
  });
  return problems;
}

/** Turns zod issues into "file: <subject> field "x" must … (got: …)" lines. */
function describeIssues(file: string, subject: 'manifest' | 'front matter', error: z.ZodError, raw: unknown): string[] {
  return error.issues.map((issue) => {
    const field = issue.path.length === 0 ? subject : `${subject} field "${formatPath(issue.path)}"`;
    // An unknown key's value is irrelevant; for everything else, showing it speeds up the fix.
    const got = issue.code === 'unrecognized_keys' ? '' : ` (got: ${preview(valueAt(raw, issue.path))})`;
    return `${show(file)}: ${field} ${issue.message}${got}`;
  });
}

function formatPath(path: PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

function valueAt(value: unknown, path: PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function preview(value: unknown): string {
  if (value === undefined) return 'undefined';
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/**
 * Reads a package file: not a symbolic link, and within the size limit before a byte is read.
 * O_NOFOLLOW makes the read itself refuse a link put there after the check.
 */
function readText(file: string, hint: string): string {
  const stat = lstatSync(file, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) throw new PackageError(symlinkProblem(file));
  if (!stat?.isFile()) {
    throw new PackageError(`${show(file)}: file not found${hint ? `; ${hint}` : ''}.`);
  }
  if (stat.size > DEFAULT_LIMITS.promptFileBytes)
    throw new PackageError(
      `${show(file)}: ${stat.size} bytes, more than the ${DEFAULT_LIMITS.promptFileBytes}-byte limit (promptFileBytes); shorten the file.`,
    );
  // Strip a byte-order mark: editors on Windows add one and JSON.parse rejects it.
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new PackageError(symlinkProblem(file));
    throw error;
  }
  try {
    return readFileSync(fd, 'utf8').replace(/^\uFEFF/, '');
  } finally {
    closeSync(fd);
  }
}

/**
 * Any symbolic link in a package is refused, not only one that points out of its folder.
 * "Points inside" needs both paths resolved and still holds only until the link or a folder
 * on its way changes; and a package is a folder that is copied, archived and published,
 * where a link breaks or points somewhere else on the next machine. A package never needs
 * one, so the rule is the simple one: the loader reads only plain files and folders.
 */
function symlinkProblem(path: string): string {
  return (
    `${show(path)}: is a symbolic link; a skill package is read only from plain files and folders ` +
    `inside it, so copy the file into the package folder instead of linking it.`
  );
}

function fail(packageDir: string, problems: string[]): never {
  if (problems.length === 1) throw new PackageError(problems[0]!);
  throw new PackageError(`Skill package ${show(packageDir)} has ${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/** A path as shown in messages: relative to the working directory (`cwd`) when inside it. */
export function show(path: string, cwd: string = process.cwd()): string {
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}
