/**
 * Model text never reaches the terminal raw: the real `steward` commands, against a fake
 * OpenAI server whose replies carry escape sequences (window title, clear screen, an OSC 8
 * hyperlink, an 8-bit CSI) and bidi overrides, print them visibly instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, runCli, type CliResult } from '../support/cli-process.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';

const CLI_TIMEOUT = 120_000;

const TITLE = '\x1b]0;pwned title\x07';
const CLEAR = '\x1b[2J';
const LINK = '\x1b]8;;http://evil.example/\x1b\\click me\x1b]8;;\x1b\\';
const CSI8 = '\u009b31m';
const RLO = 'invoice\u202Etxt.exe';
const hostile = (what: string) => `${what}: ${TITLE}${CLEAR}${LINK} ${CSI8} ${RLO}\rline two`;

/** Raw terminal controls: C0 except newline and tab, DEL, C1, and the bidi controls. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

const reply = (name: string, args: unknown, content?: string): FakeStep => ({
  reply: { content: content ?? null, toolCalls: [{ name, arguments: JSON.stringify(args) }] },
});

let dir: string;
let db: string;
let server: FakeOpenAI;
let env: Record<string, string>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'steward-tty-'));
  db = join(dir, 'steward.db');
  server = await startFakeOpenAI([
    reply('ask_user', { message: hostile('message'), assessment: hostile('assessment'), questions: [hostile('question')] }, hostile('content')),
    reply('run_worker', { workerId: 'echo', reason: hostile('reason'), requiresApproval: true }),
    reply('submit', { outputs: { note: hostile('note') } }),
    reply('run_worker', { workerId: 'summarize', reason: hostile('reason 2'), requiresApproval: false }),
    reply('submit', { outputs: { summary: hostile('summary tag') } }),
    reply('finish', { summary: hostile('summary') }),
  ]);
  env = { OPENAI_BASE_URL: server.baseURL, STEWARD_MODEL: 'fake-model' };
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(args, { db, env, timeoutMs: CLI_TIMEOUT });

/** Nothing raw on either stream, and the hostile sequences shown visibly where `what` was printed. */
function expectSafe(result: CliResult, ...what: string[]): void {
  const out = result.stdout + result.stderr;
  expect(result.code, out).toBe(0);
  const raw = RAW.exec(out);
  expect(
    raw,
    `raw U+${raw?.[0].codePointAt(0)!.toString(16).padStart(4, '0')} near ${JSON.stringify(out.slice(Math.max(0, (raw?.index ?? 0) - 40), (raw?.index ?? 0) + 40))}`,
  ).toBeNull();
  for (const w of what) {
    expect(out).toContain(`${w}: ␛]0;pwned title␇␛[2J␛]8;;http://evil.example/␛\\click me␛]8;;␛\\ \\x9b31m invoice<U+202E>txt.exe␍line two`);
  }
}

it(
  'send, show, log, list and run show model text with its controls made visible',
  async () => {
    const created = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json'));
    const id = created.id;

    // The user's own text goes through the same path (it is shown back in the journal).
    const asked = await cli('send', id, 'input', '--text', hostile('request'));
    expectSafe(asked, 'message', 'assessment', 'question');

    const step = await cli('send', id, 'confirm');
    expectSafe(step, 'reason');
    expect(step.stdout).toContain('Reason: reason: ␛]0;');

    const artifact = await cli('send', id, 'approve');
    expectSafe(artifact, 'note');

    expectSafe(await cli('show', id), 'note');
    const log = await cli('log', id);
    expectSafe(log);
    expect(log.stdout).toContain('\\u001b'); // the user's --text, JSON-escaped in the journal gist
    expectSafe(await cli('list'));

    // `run` plays the user (stdin is not a terminal): accepts, runs the summarizer, finishes.
    const run = await cli('run', '--session', id);
    expectSafe(run, 'summary tag', 'summary');
    expect(run.stdout).toMatch(/Session s_\w+ is done/);
    expect(server.unexpected).toEqual([]);
  },
  4 * CLI_TIMEOUT,
);

it(
  '--json keeps every character (the parsed value is the model text) but prints C1 and bidi controls as \\u escapes',
  async () => {
    const created = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json'));
    const shown = await cli('show', created.id, '--json');
    expect(RAW.exec(shown.stdout)).toBeNull();
    // The first test's session is in the store too: its view holds the hostile summary.
    const listed = await cli('list', '--json');
    expect(RAW.exec(listed.stdout)).toBeNull();
    const sessions = parseJson<Array<{ id: string }>>(listed);
    const done = sessions.find((s) => s.id !== created.id)!;
    const view = await cli('show', done.id, '--json');
    expect(RAW.exec(view.stdout), view.stdout).toBeNull();
    expect(view.stdout).toContain('\\u001b]0;pwned title\\u0007');
    expect(view.stdout).toContain('\\u009b31m');
    expect(view.stdout).toContain('invoice\\u202etxt.exe');
    expect(parseJson<ViewJson>(view).message).toBe(hostile('summary'));
  },
  4 * CLI_TIMEOUT,
);
