/**
 * A worker's MCP tool calls on the command line, against the official-SDK notes server that
 * records every call it receives (test/tools/servers/notes.mjs) and a fake OpenAI server:
 * `steward run` on a terminal shows each call and decides them one by one (approve, approve with
 * arguments typed in, reject with a reason), refusing a bad edit and asking again; the autopilot
 * never approves a tool call; `steward show` renders the wait, a tool changed since its approval included.
 */
import { expect, it } from 'vitest';
import { SqliteStore } from '../../src/index.js';
import type { FakeOpenAI, FakeStep } from '../support/fake-openai-server.js';
import { call, reply, runKeeper, submit, toolResultsOf, useNotesModel } from './notes-model.js';
import { runCli } from '../support/cli-process.js';
import { CTRL_C, DOWN, ENTER, hasScript, terminal, REQUEST_PROMPT } from '../support/terminal.js';
import { useTempDir } from '../support/temp.js';
import { notesPackage, type NotesPackage } from '../tools/notes-package.js';

const tmp = useTempDir('steward-cli-tools-');
const setupModel = useNotesModel(tmp);

/** The fake model, the notes package and the environment a `steward` process needs for them. */
async function setup(steps: FakeStep[]): Promise<{ fake: FakeOpenAI; notes: NotesPackage; env: Record<string, string>; db: string }> {
  const notes = notesPackage();
  const { fake, env, db } = await setupModel(steps, notes);
  return { fake, notes, env, db };
}

/** The results of the worker's MCP calls (ids c…) the model was sent in request `n` (1-based). */
const toolResults = (fake: FakeOpenAI, n: number): Record<string, string> =>
  Object.fromEntries(Object.entries(toolResultsOf(fake, n)).filter(([id]) => id.startsWith('c')));

it.skipIf(!hasScript)(
  'steward run decides each tool call on its own: shows it, refuses a bad edit and asks again, approves as edited, rejects with a reason; only the approved calls reach the server',
  async () => {
    const { fake, notes, env, db } = await setup([
      runKeeper,
      reply(
        call('notes__write_note', { path: 'a.md', text: 'One' }, 'c1'),
        call('notes__delete_note', { path: 'b.md' }, 'c2'),
        call('notes__write_note', { path: 'c.md', text: 'Three \u001b[2J\u202eevil' }, 'c3'),
      ),
      submit,
    ]);
    const tty = terminal(`run --package notes --packages ${JSON.stringify(notes.packagesDir)}`, db, env);
    const { waitFor, type } = tty;
    try {
      await waitFor(REQUEST_PROMPT, 'the request prompt');
      await type(`Keep my notes${ENTER}`);
      await waitFor(/Tool call c1: notes\.write_note \(1 of 3 waiting\)/, 'the first call asked about');
      // Edit: not an object (refused at the prompt), then an object the tool's schema refuses, then a good one.
      await type(`${DOWN}${ENTER}`);
      await waitFor(/as a JSON object/, 'the edit prompt');
      await type(`${'\x7f'.repeat(40)}[1]${ENTER}`);
      await waitFor(/Not a JSON object \(an array\)/, 'the prompt refusing an array');
      await type(`${'\x7f'.repeat(5)}{"path": "a.md"}${ENTER}`);
      await waitFor(/do not match its input schema/, 'the refusal of the schema');
      await waitFor(/Tool call c1: notes\.write_note \(1 of 3 waiting\)/, 'the same call asked about again');
      await type(`${DOWN}${ENTER}`);
      await waitFor(/as a JSON object/, 'the edit prompt again');
      await type(`${'\x7f'.repeat(40)}{"path": "a.md", "text": "Edited"}${ENTER}`);
      await waitFor(/Tool call c2: notes\.delete_note \(1 of 2 waiting\)/, 'the second call');
      await type(`${DOWN}${DOWN}${ENTER}`); // Reject
      await waitFor(/Why\? \(the model reads it/, 'the reason prompt');
      await type(`Keep b${ENTER}`);
      await waitFor(/Tool call c3: notes\.write_note[^(\n]*\n/, 'the last call');
      await type(ENTER); // Approve
      await waitFor(/Accept the artifact/, 'the review once the calls ran');
      await type(CTRL_C);
      await waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }

    const screen = tty.screen;
    // Each call as a person decides it: the tool's description, its hints, the arguments as JSON, why it waits.
    expect(screen).toContain('notes.write_note: Writes a note.');
    expect(screen).toContain('notes.delete_note: Deletes a note.');
    expect(screen).toContain('Hints: destructive');
    expect(screen).toContain('"path": "b.md"');
    expect(screen).toContain('Waits because the tool is not marked read-only, so a person decides (the safe default).');
    // What the model wrote reaches the terminal as JSON escapes, never as a control sequence or a bidi override.
    expect(screen).toContain('"text": "Three \\u001b[2J\\u202eevil"');
    expect(screen).not.toContain('\u202e');
    expect(screen).toMatch(/Approved by \S+, with edited arguments/);

    expect(notes.calls()).toEqual([
      { tool: 'write_note', args: { path: 'a.md', text: 'Edited' } },
      { tool: 'write_note', args: { path: 'c.md', text: 'Three \u001b[2J\u202eevil' } },
    ]);
    expect(toolResults(fake, 3)).toEqual({
      c1: 'wrote a.md',
      c2: 'Error: a person rejected this call; it did not run. Their reason: Keep b',
      c3: 'wrote c.md',
    });
    expect(fake.unexpected).toEqual([]);

    const store = new SqliteStore(db);
    try {
      const [summary] = (await store.list()).sessions;
      const decisions = (await store.journal(summary!.id)).filter((e) => e.type.endsWith('_tool_call') && e.kind === 'event');
      const said = (e: (typeof decisions)[number]) => {
        const payload = e.payload as { callId?: string; refused?: { code: string } };
        return payload.refused ? `refused: ${payload.refused.code}` : payload.callId;
      };
      expect(decisions.map((e) => [e.type, said(e)])).toEqual([
        ['user_approved_tool_call', 'refused: invalid_event'], // the edit the schema refused: journalled, never applied
        ['user_approved_tool_call', 'c1'],
        ['user_rejected_tool_call', 'c2'],
        ['user_approved_tool_call', 'c3'],
      ]);
    } finally {
      await store.close();
    }
  },
  120_000,
);

it('the autopilot stops at a tool call instead of approving it; steward show renders the wait, and a tool changed since its approval shows what changed', async () => {
  const { notes, env, db } = await setup([
    runKeeper,
    reply(call('notes__write_note', { path: 'a.md', text: 'One' }, 'c1'), call('notes__delete_note', { path: 'b.md\u009b2J' }, 'c2')),
  ]);
  const packages = ['--packages', notes.packagesDir];
  const auto = await runCli(['run', '--auto', '--package', 'notes', '--request', 'Keep my notes', ...packages], { db, env });
  expect(auto.code).toBe(1);
  expect(auto.stderr).toContain("Stopped: 2 tool calls wait for a person's decision: c1 (notes.write_note), c2 (notes.delete_note).");
  expect(auto.stderr).toContain('The autopilot never approves a tool call');
  // All the autopilot did: it gave the request; it decided nothing after it.
  expect(auto.stdout.match(/→ \(auto\) .*/g)).toEqual(['→ (auto) request: Keep my notes']);
  expect(notes.calls()).toEqual([]);
  const id = /session (s_\w+)/.exec(auto.stdout)?.[1] ?? /--session (s_\w+)/.exec(auto.stderr)![1]!;

  const show = await runCli(['show', id, ...packages], { db, env });
  expect(show.code).toBe(0);
  expect(show.stdout).toContain('Waiting for you: approve or reject 2 tool calls, one at a time, of keeper.');
  expect(show.stdout).toContain('Tool call 1 of 2 · notes.write_note (c1) · pending');
  expect(show.stdout).toContain('notes.delete_note: Deletes a note.');
  expect(show.stdout).toContain('"path": "b.md\\u009b2J"');
  expect(show.stdout).not.toContain('\u009b');
  expect(show.stdout).toContain('To decide: approve-call --call c2 [--arguments JSON], or reject-call --call c2 [--reason TEXT].');

  // The server is redeployed with a new description of write_note: c1, approved before, does not run and waits again.
  const changed = { ...env, NOTES_WRITE_DESCRIPTION: 'Writes a note, and mails it to everyone.' };
  expect((await runCli(['send', id, 'approve-call', '--call', 'c1', ...packages], { db, env })).code).toBe(0);
  const rejected = await runCli(['send', id, 'reject-call', '--call', 'c2', '--reason', 'Keep b', ...packages], { db, env: changed });
  expect(rejected.code).toBe(0);
  expect(notes.calls()).toEqual([]);
  const again = await runCli(['show', id, ...packages], { db, env: changed });
  expect(again.stdout).toContain('Tool call 1 of 2 · notes.write_note (c1) · pending');
  expect(again.stdout).toContain('The tool changed since it was approved; it did not run. What changed:');
  expect(again.stdout).toContain('description: "Writes a note." → "Writes a note, and mails it to everyone."');
  expect(again.stdout).toMatch(/Tool call 2 of 2 · notes\.delete_note \(c2\) · rejected ──\n[^]*Rejected by \S+: it does not run\. Reason: Keep b/);
}, 120_000);
