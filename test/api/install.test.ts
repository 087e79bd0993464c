import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

// What `npm install` prints in a fresh clone, read from the lockfile it installs from: an
// EBADENGINE for a runtime package that refuses a Node we claim.
const root = join(import.meta.dirname, '../..');

const Entry = z.looseObject({
  version: z.string().optional(),
  dev: z.boolean().optional(),
  engines: z.union([z.looseObject({ node: z.string().optional() }), z.array(z.string())]).optional(),
});
const Lockfile = z.looseObject({ packages: z.record(z.string(), Entry) });
const Manifest = z.looseObject({ engines: z.object({ node: z.string() }) });

const lock = Lockfile.parse(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')));
const manifest = Manifest.parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
const packages = lock.packages;

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
});
