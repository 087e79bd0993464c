/**
 * The two waits of a worker's MCP tool call under way, on the command line, against the
 * official-SDK notes server that records every call it receives (test/tools/servers/notes.mjs)
 * and a fake OpenAI server: its `confirm_write` asks a person to fill a form first (tool_input),
 * and a process killed during `slow_write` leaves the call cut off (tool_interrupted). The
 * autopilot stops at both; `steward show` renders them with the commands that answer them;
 * `steward send` answers them, a form's answer checked against the server's schema.
 */
import { expect, it } from 'vitest';
import type { FakeOpenAI, FakeStep } from '../support/fake-openai-server.js';
import { call, reply, runKeeper, submit, toolResultsOf, useNotesModel } from './notes-model.js';
import { runCli } from '../support/cli-process.js';
import { CTRL_C, DOWN, ENTER, hasScript, terminal, REQUEST_PROMPT } from '../support/terminal.js';
import { useTempDir } from '../support/temp.js';
import { killedMidCall } from '../tools/killed-mid-call.js';
import { notesPackage, type NotesPackage } from '../tools/notes-package.js';

const tmp = useTempDir('steward-cli-tool-waits-');
const setupModel = useNotesModel(tmp);
/** confirm_write runs without an approval: what waits is the server's own question. */
const confirmRunsAtOnce = { tools: { confirm_write: { approval: 'never' } } };

const setup = (steps: FakeStep[], notes: NotesPackage, db: string) => setupModel(steps, notes, db);

/** The tool result the model was sent for `callId` in request `n` (1-based). */
const toolResult = (fake: FakeOpenAI, n: number, callId: string): string | undefined => toolResultsOf(fake, n)[callId];

it("the autopilot stops where a server asks for input; show renders the form and the command; a bad answer is refused with the schema's message, a good one completes the call", async () => {
  const notes = notesPackage(confirmRunsAtOnce);
  const { fake, env, db, packages } = await setup(
    [runKeeper, reply(call('notes__confirm_write', { path: 'a.md', text: 'One' }, 'c1')), submit],
    notes,
    'input.db',
  );
  const auto = await runCli(['run', '--auto', '--package', 'notes', '--request', 'Keep my notes', ...packages], { db, env });
  expect(auto.code).toBe(1);
  expect(auto.stderr).toContain('Stopped: notes.confirm_write (c1) asks a person for input. The autopilot never answers for a person');
  expect(auto.stderr).toMatch(/answer with `steward send s_\w+ answer-call --call c1 --responses JSON[^`]*`/);
  // All the autopilot did: it gave the request; it decided nothing after it.
  expect(auto.stdout.match(/→ \(auto\) .*/g)).toEqual(['→ (auto) request: Keep my notes']);
  // The server asked, and nothing was answered for the person.
  expect(notes.calls()).toEqual([{ tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } }]);
  const id = /--session (s_\w+)/.exec(auto.stderr)![1]!;

  const show = await runCli(['show', id, ...packages], { db, env });
  expect(show.code).toBe(0);
  expect(show.stdout).toContain('Waiting for you: answer what notes.confirm_write asks (1 request).');
  expect(show.stdout).toContain('notes.confirm_write: Writes a note once a person confirms it.');
  expect(show.stdout).toContain('Request "confirm" of notes.confirm_write · a form');
  expect(show.stdout).toContain('Write a.md?');
  expect(show.stdout).toContain('  confirm (boolean; required): Write it');
  expect(show.stdout).toContain('  initials (text; required; at least 2 characters): Your initials');
  expect(show.stdout).toContain(
    `steward send ${id} answer-call --call c1 --responses '{"confirm":{"action":"accept","content":{"confirm":true,"initials":"…"}}}'`,
  );
  expect(show.stdout).toContain(`steward send ${id} answer-call --call c1 --responses '{"confirm":{"action":"decline"}}'`);

  const answer = (initials: string) => JSON.stringify({ confirm: { action: 'accept', content: { confirm: true, initials } } });
  const bad = await runCli(['send', id, 'answer-call', '--responses', answer('A'), ...packages], { db, env });
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toContain(
    'The answer to "confirm" does not match the form notes.confirm_write asked for: content/initials must NOT have fewer than 2 characters.',
  );
  expect(notes.calls()).toHaveLength(1);

  const good = await runCli(['send', id, 'answer-call', '--responses', answer('AB'), ...packages], { db, env });
  expect(good.code, good.stderr).toBe(0);
  expect(good.stdout).toContain('Waiting for you: accept or reject artifact a1 (keeper).');
  expect(notes.calls()).toEqual([
    { tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } },
    { tool: 'confirm_write', args: { path: 'a.md', text: 'One', answer: { action: 'accept', content: { confirm: true, initials: 'AB' } } } },
  ]);
  expect(toolResult(fake, 3, 'c1')).toBe('wrote a.md, confirmed by AB');
  expect(fake.unexpected).toEqual([]);
}, 120_000);

it('a call cut off by a killed process: the autopilot stops at tool_interrupted, show renders the three choices, and give-result settles it', async () => {
  const notes = notesPackage();
  const { fake, env, db, packages } = await setup([submit], notes, 'killed.db');
  await killedMidCall(notes, db);

  const auto = await runCli(['run', '--auto', '--session', 'killed', ...packages], { db, env });
  expect(auto.code).toBe(1);
  expect(auto.stderr).toContain(
    'Stopped: notes.slow_write (k1) was cut off when the process running it stopped; it may or may not have taken effect. The autopilot never decides that;',
  );
  expect(auto.stderr).toContain('give its result with `steward send killed give-result --call k1 --result TEXT');
  expect(notes.calls()).toHaveLength(1);

  const show = await runCli(['show', 'killed', ...packages], { db, env });
  expect(show.code).toBe(0);
  expect(show.stdout).toContain('Waiting for you: notes.slow_write was cut off when its process stopped; run it again, skip it, or give its result.');
  expect(show.stdout).toContain('Interrupted tool call k1 · notes.slow_write');
  expect(show.stdout).toContain('"path": "a.md"');
  expect(show.stdout).toContain('it may or may not have taken effect. It does not run again unless you say so.');
  expect(show.stdout).toContain('  Run it again:     steward send killed approve-call --call k1');
  expect(show.stdout).toContain('  Skip it:          steward send killed reject-call --call k1 [--reason TEXT]');
  expect(show.stdout).toContain('  Give its result:  steward send killed give-result --call k1 --result TEXT');

  const given = await runCli(['send', 'killed', 'give-result', '--result', 'a.md holds the note.', ...packages], { db, env });
  expect(given.code, given.stderr).toBe(0);
  expect(given.stdout).toContain('Waiting for you: accept or reject artifact a1 (keeper).');
  expect(toolResult(fake, 1, 'k1')).toBe(
    '(A person gave this result by hand: the call was cut off when the process running it stopped.)\na.md holds the note.',
  );
  expect(notes.calls()).toHaveLength(1);
  expect(fake.unexpected).toEqual([]);
}, 120_000);

it.skipIf(!hasScript)(
  "steward run fills the server's form field by field; an answer the schema refuses is shown and the form asked again",
  async () => {
    const notes = notesPackage(confirmRunsAtOnce);
    const { fake, env, db } = await setup([runKeeper, reply(call('notes__confirm_write', { path: 'a.md', text: 'One' }, 'c1')), submit], notes, 'tty.db');
    const tty = terminal(`run --package notes --packages ${JSON.stringify(notes.packagesDir)}`, db, env);
    const { waitFor, type } = tty;
    try {
      await waitFor(REQUEST_PROMPT, 'the request prompt');
      await type(`Keep my notes${ENTER}`);
      await waitFor(/notes\.confirm_write asks \(confirm\): Write a\.md\?/, 'the first choice on the request');
      await type(ENTER); // Fill in the form
      await waitFor(/confirm \(boolean; required\): Write it/, 'the yes/no field');
      await type('y');
      await waitFor(/initials \(text; required; at least 2 characters\): Your initials/, 'the text field');
      await type(ENTER);
      await waitFor(/This field is required\./, 'the prompt refusing an empty required field');
      await type(`A${ENTER}`);
      await waitFor(/must NOT have fewer than 2 characters/, "the refusal of the server's schema");
      await waitFor(/notes\.confirm_write asks \(confirm\): Write a\.md\?/, 'the same request asked again');
      await type(ENTER);
      await waitFor(/confirm \(boolean; required\): Write it/, 'the yes/no field again');
      await type('y');
      await waitFor(/initials \(text; required; at least 2 characters\)/, 'the text field again');
      await type(`AB${ENTER}`);
      await waitFor(/Accept the artifact/, 'the review once the call went on');
      await type(CTRL_C);
      await waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }
    expect(tty.screen).toContain('Request "confirm" of notes.confirm_write · a form');
    expect(notes.calls()).toEqual([
      { tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } },
      { tool: 'confirm_write', args: { path: 'a.md', text: 'One', answer: { action: 'accept', content: { confirm: true, initials: 'AB' } } } },
    ]);
    expect(toolResult(fake, 3, 'c1')).toBe('wrote a.md, confirmed by AB');
  },
  120_000,
);

it.skipIf(!hasScript)(
  'steward run on a call cut off by a killed process: it is not run again; skipping it asks a reason, which the model reads',
  async () => {
    const notes = notesPackage();
    const { fake, env, db } = await setup([submit], notes, 'tty-killed.db');
    await killedMidCall(notes, db);
    const tty = terminal(`run --session killed --packages ${JSON.stringify(notes.packagesDir)}`, db, env);
    const { waitFor, type } = tty;
    try {
      await waitFor(/Tool call k1: notes\.slow_write was cut off, so it may or may not have taken effect/, 'the three choices');
      await type(`${DOWN}${ENTER}`); // Skip it
      await waitFor(/Why skip it\?/, 'the reason prompt');
      await type(`I checked a.md by hand${ENTER}`);
      await waitFor(/Accept the artifact/, 'the review once the worker went on');
      await type(CTRL_C);
      await waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }
    expect(tty.screen).toContain('  Give its result:  steward send killed give-result --call k1 --result TEXT');
    expect(notes.calls()).toEqual([{ tool: 'slow_write', args: { path: 'a.md' } }]);
    expect(toolResult(fake, 1, 'k1')).toBe(
      'Error: this call was cut off when the process running it stopped, so it may or may not have taken effect; a person chose not to run it again. Check what it did before you call it again. Their reason: I checked a.md by hand',
    );
  },
  120_000,
);
