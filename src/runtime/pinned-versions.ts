/**
 * The package versions a runtime's sessions run: the packages on disk (each a version, new
 * sessions are pinned to it) and the versions older sessions are pinned to, read from the
 * store by hash when a session first needs one, and kept (a few) for the next.
 */
import { UserError } from '../core/errors.js';
import { openStoredVersion, shortHash, type PackageVersion, type StoredPackageVersion } from '../skills/package-version.js';
import type { SessionStore } from '../store/session-store.js';

/** Versions read from the store kept in memory at once (the disk's are always kept): each may be megabytes. */
const STORED_VERSIONS_CACHED = 16;

export class PinnedVersions {
  /** Package id → its version on disk. */
  private readonly onDisk = new Map<string, PackageVersion>();
  private readonly byHash = new Map<string, PackageVersion>();
  /** Versions read from the store, oldest first. */
  private readonly fromStore = new Map<string, PackageVersion>();

  constructor(
    disk: Iterable<PackageVersion>,
    private readonly store: SessionStore | undefined,
  ) {
    for (const version of disk) {
      this.onDisk.set(version.packageId, version);
      this.byHash.set(version.hash, version);
    }
  }

  /** The version of a package on disk (undefined: no such package). */
  disk(packageId: string): PackageVersion | undefined {
    return this.onDisk.get(packageId);
  }

  /** The version with this hash: on disk, already read, or from the store; undefined when none holds it. */
  async get(hash: string): Promise<PackageVersion | undefined> {
    const known = this.byHash.get(hash) ?? this.fromStore.get(hash);
    if (known) return known;
    const stored = await this.store?.packageVersion(hash);
    if (!stored) return undefined;
    const version = openStoredVersion(stored);
    this.fromStore.set(hash, version);
    if (this.fromStore.size > STORED_VERSIONS_CACHED) this.fromStore.delete(this.fromStore.keys().next().value!);
    return version;
  }

  /** A worker's prompt in the version a session is pinned to (without one: the package on disk, as before pinning). */
  async prompt(packageId: string, workerId: string, hash: string | undefined): Promise<string | undefined> {
    if (hash === undefined) return this.onDisk.get(packageId)?.content.workers.find((w) => w.id === workerId)?.prompt;
    const version = await this.get(hash);
    if (!version) {
      throw new UserError(
        `The session is pinned to version ${shortHash(hash)} of package "${packageId}", which this runtime's store does not hold: ` +
          'open it on the store it was created on, or move it to the package on disk with `steward upgrade <id> --to current`.',
      );
    }
    return version.content.workers.find((w) => w.id === workerId)?.prompt;
  }
}

/** What a store keeps of a version. */
export function storedVersion(version: PackageVersion): StoredPackageVersion {
  return { hash: version.hash, packageId: version.packageId, json: version.json };
}
