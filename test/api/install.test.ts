import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

// What `npm install` prints in a fresh clone, read from the lockfile it installs from: an
// EBADENGINE for a runtime package that refuses a Node we claim, an ERESOLVE for a peer range
// that the installed version misses (npm then overrides it, or the package.json has to).
const root = join(import.meta.dirname, '../..');

const Entry = z.looseObject({
  version: z.string().optional(),
  dev: z.boolean().optional(),
  engines: z.union([z.looseObject({ node: z.string().optional() }), z.array(z.string())]).optional(),
  peerDependencies: z.record(z.string(), z.string()).optional(),
});
const Lockfile = z.looseObject({ packages: z.record(z.string(), Entry) });
const Manifest = z.looseObject({
  engines: z.object({ node: z.string() }),
  overrides: z.record(z.string(), z.unknown()).optional(),
});

const lock = Lockfile.parse(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')));
const manifest = Manifest.parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
const packages = lock.packages;

/** The entry npm resolves `name` to from the package at `from`: the nearest node_modules up the path. */
function resolveFrom(from: string, name: string): z.infer<typeof Entry> | undefined {
  let base = from;
  for (;;) {
    const found = packages[`${base === '' ? '' : `${base}/`}node_modules/${name}`];
    if (found) return found;
    if (base === '') return undefined;
    const up = base.lastIndexOf('/node_modules/');
    base = up < 0 ? '' : base.slice(0, up);
  }
}

function packageName(path: string): string {
  return path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

function overridden(dependent: string, peer: string): boolean {
  const rule = manifest.overrides?.[dependent];
  return typeof rule === 'object' && rule !== null && peer in rule;
}

describe('what a clean install prints', () => {
  it('our engines admit Node 20', () => {
    expect(semver.intersects(manifest.engines.node, '20.x')).toBe(true);
  });

  it("every runtime package's engines admit every Node 20 release ours admit (no EBADENGINE)", () => {
    const ours = semver.validRange(`${manifest.engines.node} <21.0.0-0`);
    expect(ours).not.toBeNull();
    const refusing = Object.entries(packages)
      .filter(([path, entry]) => path !== '' && entry.dev !== true)
      .flatMap(([path, entry]) => {
        const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return node !== undefined && !semver.subset(ours!, node) ? [`${path}@${entry.version} wants node ${node}`] : [];
      });
    expect(refusing).toEqual([]);
  });

  it('every installed peer is in the range its dependent asks for, or overridden for it by name (no ERESOLVE)', () => {
    const missed = Object.entries(packages).flatMap(([path, entry]) =>
      Object.entries(entry.peerDependencies ?? {}).flatMap(([name, range]) => {
        const found = resolveFrom(path, name);
        if (found?.version === undefined || semver.satisfies(found.version, range, { includePrerelease: true })) return [];
        // npm stays silent about a miss package.json overrides for that very package (the
        // extractor reads XState 4 syntax and is given XState 5 on purpose), not about its dependencies'.
        if (overridden(packageName(path), name)) return [];
        return [`${path} wants ${name}@${range}, gets ${found.version}`];
      }),
    );
    expect(missed).toEqual([]);
  });

  it('no override forces an OpenTelemetry version', () => {
    expect(Object.keys(manifest.overrides ?? {}).filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
  });
});
