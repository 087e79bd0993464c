/** `--as` cannot name the runtime or a worker: the session refuses the event, and the CLI says why and how to fix it. */
import { expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-cli-reserved-');

it('refuses `--as steward` and `--as echo`; nothing is sent', async () => {
  const db = tmp.path('reserved.db');
  const cli = (...args: string[]) => runCli(args, { db });
  const id = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json')).id;
  for (const name of ['steward', 'echo']) {
    const refused = await cli('send', id, 'input', '--text', 'Green tea.', '--as', name);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`by: "${name}" is a reserved name: steward, system and the worker ids of this session's package (echo, summarize)`);
    expect(refused.stderr).toContain('--as NAME');
  }
  const sent = parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'Green tea.', '--as', 'alice', '--json'));
  expect(sent.waitingReason).toBe('approve_step');
}, 90_000); // four CLI processes one after another: generous for a busy machine
