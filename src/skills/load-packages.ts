/**
 * Loads the packages of one or several folders of package folders, merged by package id.
 * Sync fs, like the loader of one package: it runs once at startup.
 */
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PackageError } from '../core/errors.js';
import { bundledPackagesDir, loadPackage, show } from './loader.js';
import type { SkillPackage } from '../core/skills/package-schema.js';

/**
 * Loads every package folder under `packagesDir` — one folder of package folders, or several —
 * keyed by package id (sorted by id). Two folders that define the same package id are refused
 * (a PackageError naming both), except that a bundled package gives way to a package of the
 * same id in another folder: a copy of `short-story` edited in your own folder replaces it.
 * @example
 * const packages = loadPackages();
 * packages.get('short-story')?.workers.map((w) => w.id); // ['brief-writer', 'outliner', …]
 * loadPackages([bundledPackagesDir, './packages']); // the bundled ones and your own
 */
export function loadPackages(packagesDir: string | readonly string[] = bundledPackagesDir): Map<string, SkillPackage> {
  const dirs = typeof packagesDir === 'string' ? [packagesDir] : [...packagesDir];
  if (dirs.length === 0) throw new PackageError('No packages folder given; pass at least one folder that holds package folders.');
  const bundled = resolve(bundledPackagesDir);
  const packages = new Map<string, SkillPackage>();
  const fromBundled = new Set<string>();
  const failures: string[] = [];
  for (const dir of dirs) {
    const root = resolve(dir);
    let found: Map<string, SkillPackage>;
    try {
      found = loadPackagesFolder(root);
    } catch (error) {
      if (!PackageError.isInstance(error)) throw error;
      failures.push(error.message);
      continue;
    }
    const isBundled = root === bundled;
    for (const [id, pkg] of found) {
      const earlier = packages.get(id);
      if (earlier && isBundled) continue;
      if (earlier && !fromBundled.has(id)) {
        failures.push(
          `Package "${id}" is defined twice: in ${show(earlier.dir)} and in ${show(pkg.dir)}; ` +
            'remove one of the folders from the packages folders, or give one package another id (its folder name and manifest "id").',
        );
        continue;
      }
      if (isBundled) fromBundled.add(id);
      else fromBundled.delete(id);
      packages.set(id, pkg);
    }
  }
  if (failures.length > 0) throw new PackageError(failures.join('\n'));
  return new Map([...packages].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The packages of one folder of package folders. */
function loadPackagesFolder(root: string): Map<string, SkillPackage> {
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    throw new PackageError(`${show(root)}: packages folder not found; create it or pass the folder that holds your package folders.`);
  }
  if (statSync(join(root, 'manifest.json'), { throwIfNoEntry: false })) {
    throw new PackageError(
      `${show(root)} is a package folder itself (it holds a manifest.json), not a folder of package folders; pass the folder that holds it: ${show(dirname(root))}.`,
    );
  }
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort();
  if (folders.length === 0) {
    throw new PackageError(`${show(root)}: no skill packages found; add a folder <packageId>/ with a manifest.json and workers/<workerId>.md files.`);
  }

  const packages = new Map<string, SkillPackage>();
  const failures: string[] = [];
  for (const folder of folders) {
    try {
      const pkg = loadPackage(join(root, folder));
      packages.set(pkg.id, pkg);
    } catch (error) {
      if (!PackageError.isInstance(error)) throw error;
      failures.push(error.message);
    }
  }
  if (failures.length > 0) throw new PackageError(failures.join('\n'));
  return packages;
}
