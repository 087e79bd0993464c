/**
 * Long text from a file or stdin: `send --text-file FILE`, `send --text -`, `run --request-file
 * FILE`, `run --request -`; and a text over the user-text limit is refused with
 * `limit_exceeded`, naming the limit and its setting, with nothing stored.
 */
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const CLI_TIMEOUT = 90_000;
const tmp = useTempDir('steward-long-text-');
const requestOf = (view: ViewJson) => view.blackboard.find((b) => b.tag === 'request');

it(
  'send reads --text-file FILE and --text - (stdin), keeping the text exactly',
  async () => {
    const db = tmp.path('send.db');
    const text = `A request from a file\nwith two lines and 'quotes' — ${'long '.repeat(5_000)}end`;
    writeFileSync(tmp.path('request.txt'), text);
    const id = (await runCli(['new', '--package', 'tiny'], { db })).stdout.trim();
    const fromFile = await runCli(['send', id, 'input', '--text-file', tmp.path('request.txt'), '--json'], { db });
    expect(fromFile.stderr).toBe('');
    expect(requestOf(parseJson<ViewJson>(fromFile))).toBeDefined();
    const journal = parseJson<Array<{ type: string; payload: { text?: string } }>>(await runCli(['log', id, '--json'], { db }));
    expect(journal.find((e) => e.type === 'user_submitted_input')?.payload.text).toBe(text);

    const id2 = (await runCli(['new', '--package', 'tiny'], { db })).stdout.trim();
    const fromStdin = await runCli(['send', id2, 'input', '--text', '-', '--json'], { db, input: 'From stdin\n' });
    expect(fromStdin.stderr).toBe('');
    const log = parseJson<Array<{ type: string; payload: { text?: string } }>>(await runCli(['log', id2, '--json'], { db }));
    expect(log.find((e) => e.type === 'user_submitted_input')?.payload.text).toBe('From stdin');

    const both = await runCli(['send', id2, 'input', '--text', 'a', '--text-file', tmp.path('request.txt')], { db });
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('steward [usage]: --text and --text-file');
    const missing = await runCli(['send', id2, 'input', '--text-file', tmp.path('nope.txt')], { db });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/steward \[usage\]: Cannot read --text-file ".*nope\.txt": no such file/);
  },
  CLI_TIMEOUT,
);

it(
  'run reads the request from --request-file and --request -',
  async () => {
    const db = tmp.path('run.db');
    writeFileSync(tmp.path('run.txt'), 'A lighthouse story from a file');
    const fromFile = await runCli(['run', '--package', 'tiny', '--request-file', tmp.path('run.txt')], { db });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toContain('request: A lighthouse story from a file');
    const fromStdin = await runCli(['run', '--package', 'tiny', '--request', '-'], { db, input: 'A request on stdin' });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stdout).toContain('request: A request on stdin');
  },
  CLI_TIMEOUT,
);

it(
  'refuses a text over the limit with limit_exceeded, naming the limit and STEWARD_MAX_USER_TEXT',
  async () => {
    const db = tmp.path('limit.db');
    const id = (await runCli(['new', '--package', 'tiny'], { db })).stdout.trim();
    const refused = await runCli(['send', id, 'input', '--text', '-'], { db, input: 'x'.repeat(101), env: { STEWARD_MAX_USER_TEXT: '100' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('steward [limit_exceeded]: The text of user_submitted_input has 101 characters; the limit is 100 (userTextChars');
    expect(refused.stderr).toContain('STEWARD_MAX_USER_TEXT');
    const view = parseJson<ViewJson>(await runCli(['show', id, '--json'], { db }));
    expect(view.state).toBe('waiting_user.intake');
    expect(requestOf(view)).toBeUndefined();
    const bad = await runCli(['send', id, 'input', '--text', 'hi'], { db, env: { STEWARD_MAX_USER_TEXT: 'lots' } });
    expect(bad.stderr).toContain('STEWARD_MAX_USER_TEXT must be a whole number');
  },
  CLI_TIMEOUT,
);
