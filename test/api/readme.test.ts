/**
 * What the README says that goes stale on its own: how long the full test suite takes, and
 * the install-scripts note npm 11 prints — for the better-sqlite3 version the lockfile holds,
 * with its install script — and why every package of `allowScripts` is there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const manifest = z.looseObject({ allowScripts: z.record(z.string(), z.boolean()) }).parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
const lock = z
  .looseObject({ packages: z.record(z.string(), z.looseObject({ version: z.string().optional() })) })
  .parse(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')));

describe('the README', () => {
  it('says how long the full test suite takes, in one sentence to update', () => {
    expect(readme).toMatch(/The full suite takes about \d+ minutes on a 2-core machine\./);
  });

  it("quotes npm 11's install-scripts note for the better-sqlite3 the lockfile holds, and what to do", () => {
    const version = lock.packages['node_modules/better-sqlite3']?.version;
    expect(version).toBeDefined();
    const installed = join(root, 'node_modules/better-sqlite3/package.json');
    const script = existsSync(installed) ? (JSON.parse(readFileSync(installed, 'utf8')) as { scripts: { install: string } }).scripts.install : undefined;
    expect(readme).toContain('1 package has install scripts not yet covered by allowScripts:');
    expect(readme).toContain(`better-sqlite3@${version} (install: ${script ?? ''}`);
    expect(readme).toContain('`npm install-scripts approve better-sqlite3`');
    expect(readme).toContain(`"allowScripts": { "better-sqlite3@${version}": true }`);
  });

  it('says why each package of allowScripts may run its install script', () => {
    const sentences = readme.split(/\.\s+/);
    for (const name of Object.keys(manifest.allowScripts))
      expect(
        sentences.some((s) => s.includes(name) && s.includes('install script')),
        name,
      ).toBe(true);
  });
});
