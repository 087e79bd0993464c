/** Library errors say what happened and how to fix it in the library's terms; CLI advice is the CLI's to add. */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { createRuntime, MemoryStore, SqliteStore } from '../../src/index.js';
import { ScriptedModel } from '../../src/testing.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-lib-messages-');
const cliAdvice = /`steward |--db\b|npx /;

it('a missing session and a store fault give no command-line advice', async () => {
  const runtime = createRuntime({ model: new ScriptedModel([]), store: new MemoryStore() });
  const missing = await runtime.resumeSession('s_nope').then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(missing?.message).toBe('No session "s_nope" in this store.');
  const folder = tmp.path('folder');
  mkdirSync(folder);
  let fault: Error | undefined;
  try {
    new SqliteStore(folder);
  } catch (e) {
    fault = e as Error;
  }
  expect(fault?.message).toContain('is a folder');
  expect(fault?.message).not.toMatch(cliAdvice);
  expect(missing?.message).not.toMatch(cliAdvice);
});
