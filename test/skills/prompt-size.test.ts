/** A worker prompt file over the promptFileBytes limit is refused when the package loads, naming the file and the limit. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PackageError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { loadPackage } from '../../src/skills/index.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-prompt-size-');

it('refuses a prompt file over promptFileBytes, naming the file and the limit', () => {
  const dir = tmp.path('big');
  mkdirSync(join(dir, 'workers'), { recursive: true });
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ schemaVersion: 1, id: 'big', title: 'Big', description: 'A package with a huge prompt.', workers: ['huge'] }),
  );
  const front = '---\nid: huge\ntitle: Huge\ndescription: Too long.\ninputTags: ["request"]\noutputTags: ["note"]\n---\n';
  writeFileSync(join(dir, 'workers/huge.md'), front + 'x'.repeat(DEFAULT_LIMITS.promptFileBytes));
  let error: unknown;
  try {
    loadPackage(dir);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(PackageError);
  expect((error as Error).message).toMatch(/workers\/huge\.md: \d+ bytes, more than the 262144-byte limit \(promptFileBytes\)/);
});
