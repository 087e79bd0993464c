/**
 * A package version: everything the runtime reads from a package folder (the manifest's
 * fields and every worker with its front matter and prompt), serialised canonically and
 * named by its sha256. A session is pinned to the version it started on (the hash in its
 * context's `package.version`); the store keeps each version once, by hash, so a session
 * resumed, replayed or forked next week runs the prompts it started with, whatever the
 * package folder holds by then (docs/design.md "Pinned packages").
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { PackageError, SnapshotError } from '../core/errors.js';
import type { SkillPackage, WorkerSkill } from '../core/skills/package-schema.js';
import { canonicalJson } from '../core/text/canonical-json.js';

/**
 * The largest stored version (its canonical JSON): a package of 200 workers at the 256 KiB
 * prompt limit would be 50 MiB, which no store should copy per version; 4 MiB holds any
 * package a person writes by hand many times over.
 */
export const PACKAGE_VERSION_MAX_BYTES = 4 * 1024 * 1024;

/** "sha256:" and 64 lower-case hex digits. */
export const PACKAGE_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** What a version holds: the package as loaded, without its folder (where it lies is not what it is). */
export type PackageContent = Omit<SkillPackage, 'dir'>;

export interface PackageVersion {
  hash: string;
  packageId: string;
  /** The canonical JSON of `content`: what the hash is taken of and what the store keeps. */
  json: string;
  content: PackageContent;
}

/** What a store keeps of a version (its content as canonical JSON text). */
export interface StoredPackageVersion {
  hash: string;
  packageId: string;
  json: string;
}

function hashOf(json: string): string {
  return `sha256:${createHash('sha256').update(json).digest('hex')}`;
}

/**
 * The version of a loaded package; a PackageError when it is over PACKAGE_VERSION_MAX_BYTES.
 *
 * @example
 * const version = packageVersionOf(loadPackage('./packages/my-team'));
 * console.log(version.hash); // sha256:… — changes with any edit of the manifest or a prompt
 */
export function packageVersionOf(pkg: SkillPackage): PackageVersion {
  const { dir: _dir, ...content } = pkg;
  const json = canonicalJson(content);
  if (json.length > PACKAGE_VERSION_MAX_BYTES)
    throw new PackageError(
      `Package "${pkg.id}" holds ${json.length} characters of manifest and prompts, over the ${PACKAGE_VERSION_MAX_BYTES} a stored package version may hold; shorten its prompts or split the package.`,
    );
  return { hash: hashOf(json), packageId: pkg.id, json, content };
}

/** A short form of a hash for people: "sha256:1a2b3c4d5e6f". */
export function shortHash(hash: string): string {
  return hash.slice(0, 'sha256:'.length + 12);
}

const WorkerSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  inputTags: z.array(z.string()),
  outputTags: z.array(z.string()),
  roles: z.array(z.looseObject({ id: z.string(), description: z.string() })),
  prompt: z.string(),
});
const ContentSchema = z.looseObject({ id: z.string(), title: z.string(), description: z.string(), workers: z.array(WorkerSchema).min(1) });

/**
 * A stored version read back: its JSON parsed, checked, and its hash taken again, so a row
 * that was changed in the database is refused rather than run.
 */
export function openStoredVersion(stored: StoredPackageVersion): PackageVersion {
  const fail = (why: string) =>
    new SnapshotError(
      `The stored package version ${shortHash(stored.hash)} of "${stored.packageId}" ${why}; it cannot be used. ` +
        `Move the sessions pinned to it to the package on disk with \`steward upgrade <id> --to current\`.`,
    );
  if (stored.json.length > PACKAGE_VERSION_MAX_BYTES) throw fail(`is over ${PACKAGE_VERSION_MAX_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(stored.json);
  } catch {
    throw fail('is not valid JSON');
  }
  const parsed = ContentSchema.safeParse(raw);
  if (!parsed.success) throw fail('is not a package');
  if (hashOf(canonicalJson(parsed.data)) !== stored.hash) throw fail('does not match its hash');
  const content = parsed.data as unknown as PackageContent & { workers: WorkerSkill[] };
  return { hash: stored.hash, packageId: stored.packageId, json: stored.json, content };
}
