/**
 * A worker's MCP tool calls decided in the inspector page (real chromium, as
 * inspector-page.test.ts), against the notes server that records every call it receives
 * (test/tools/servers/notes.mjs): one approve and one reject form per call that waits (an
 * approval may edit the arguments as JSON), then the form `confirm_write`'s server asks for,
 * generated from its schema, with the server's message shown as text. An answer the schema
 * refuses is shown as the refusal; a good one reaches the server and the call goes on. A call
 * cut off by a killed process is settled there too: run again, skip, or give its result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { ChatMessage } from '../../src/machine.js';
import { startInspector } from '../../src/inspect/server.js';
import { killedMidCall } from '../tools/killed-mid-call.js';
import { notesPackage, runKeeper, submitReply } from '../tools/notes-package.js';
import { buildPage } from './page-build.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('inspector tool calls');

let pageDir: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  if (skip) return;
  pageDir = await buildPage();
  await workerPages().ready();
}, 90_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(skip)('the inspector page, tool calls', () => {
  it("decides each waiting call in its own form, then answers the form the server asks for; a refused answer shows the schema's message", async () => {
    // confirm_write runs without an approval: what waits for it is its server's question.
    const notes = notesPackage({ tools: { confirm_write: { approval: 'never' } } });
    const path = '<b>a</b>.md';
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [runKeeper()] },
      {
        agent: 'worker',
        toolCalls: [scriptedCall('notes__write_note', { path: 'w.md', text: 'One' }, 'c1'), scriptedCall('notes__delete_note', { path: 'd.md' }, 'c2')],
      },
      { agent: 'worker', toolCalls: [scriptedCall('notes__confirm_write', { path, text: 'Two' }, 'c3')] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Kept.' } })] },
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'steward-inspector-tools-'));
    const store = new SqliteStore(join(dir, 'steward.db'));
    const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} } });
    const session = await runtime.createSession({ packageId: 'notes' });
    const inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, sessionId: session.id });
    cleanups.push(async () => {
      await inspector.close();
      await runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const page = await workerPages().take({ width: 1600, height: 1000 });
    page.on('pageerror', (error) => console.error('[page error]', error));
    cleanups.push(() => workerPages().release(page));
    await page.goto(inspector.url);
    await page.fill('form[data-event="user_submitted_input"] textarea', 'Keep my notes.');
    await page.click('form[data-event="user_submitted_input"] button');
    await expect.poll(() => session.view().state, { timeout: 30_000 }).toBe('waiting_user.approve_tool');

    // One approve and one reject form per waiting call; the approval sends the arguments as edited.
    await page.waitForSelector('form[data-event="user_approved_tool_call"][data-call="c2"]');
    expect(await page.locator('form[data-event="user_approved_tool_call"]').count()).toBe(2);
    expect(await page.textContent('form[data-event="user_rejected_tool_call"][data-call="c2"] .call-heading')).toBe(
      'notes.delete_note (c2) · reject: it does not run',
    );
    await page.fill('form[data-event="user_approved_tool_call"][data-call="c1"] textarea[name="arguments"]', '{"path": "w.md", "text": "Edited"}');
    await page.click('form[data-event="user_approved_tool_call"][data-call="c1"] button');
    await page.waitForSelector('form[data-event="user_approved_tool_call"][data-call="c1"]', { state: 'detached' });
    await page.fill('form[data-event="user_rejected_tool_call"][data-call="c2"] input[name="reason"]', 'Keep d');
    await page.click('form[data-event="user_rejected_tool_call"][data-call="c2"] button');
    await expect.poll(() => session.view().state, { timeout: 30_000 }).toBe('waiting_user.tool_input');

    // The server's form, generated from its schema; what the model and the server wrote stays text.
    const form = 'form[data-event="user_answered_tool_input"][data-call="c3"]';
    await page.waitForSelector(`${form} fieldset[data-request="confirm"]`);
    expect(await page.textContent(`${form} fieldset[data-request="confirm"] .message`)).toBe(`Write ${path}?`);
    expect(await page.locator(`${form} b`).count()).toBe(0);
    expect(await page.getAttribute(`${form} [data-field="confirm"]`, 'type')).toBe('checkbox');
    expect(await page.getAttribute(`${form} [data-field="initials"]`, 'placeholder')).toBe('required; at least 2 characters');
    await page.check(`${form} [data-field="confirm"]`);
    await page.fill(`${form} [data-field="initials"]`, 'A');
    await page.click(`${form} button`);
    await expect
      .poll(() => page.textContent('#send-result'), { timeout: 10_000 })
      .toContain('The answer to "confirm" does not match the form notes.confirm_write asked for: content/initials must NOT have fewer than 2 characters.');
    expect(session.view().state).toBe('waiting_user.tool_input');

    await page.fill(`${form} [data-field="initials"]`, 'AB');
    await page.click(`${form} button`);
    await expect.poll(() => session.view().state, { timeout: 30_000 }).toBe('waiting_user.review_artifact');
    expect(notes.calls()).toEqual([
      { tool: 'write_note', args: { path: 'w.md', text: 'Edited' } },
      { tool: 'confirm_write?', args: { path, text: 'Two' } },
      { tool: 'confirm_write', args: { path, text: 'Two', answer: { action: 'accept', content: { confirm: true, initials: 'AB' } } } },
    ]);
  }, 120_000);

  it('settles a call cut off by a killed process: its forms say run again, skip, give the result; the result given is what the model reads', async () => {
    const notes = notesPackage();
    const dir = mkdtempSync(join(tmpdir(), 'steward-inspector-killed-'));
    const db = join(dir, 'steward.db');
    await killedMidCall(notes, db);
    let told = '';
    const model = new ScriptedModel([
      (request) => {
        const result = request.messages.find((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool' && m.tool_call_id === 'k1');
        told = String(result?.content ?? '');
        return submitReply('Checked.');
      },
    ]);
    const store = new SqliteStore(db);
    const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} } });
    const session = await runtime.resumeSession('killed');
    expect((await session.settled()).state).toBe('waiting_user.tool_interrupted');
    const inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, sessionId: session.id });
    cleanups.push(async () => {
      await inspector.close();
      await runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const page = await workerPages().take({ width: 1600, height: 1000 });
    page.on('pageerror', (error) => console.error('[page error]', error));
    cleanups.push(() => workerPages().release(page));
    await page.goto(inspector.url);

    const give = 'form[data-event="user_gave_tool_result"][data-call="k1"]';
    await page.waitForSelector(give);
    expect(await page.textContent('form[data-event="user_approved_tool_call"][data-call="k1"] .meaning')).toBe(' · run it again');
    expect(await page.textContent('form[data-event="user_rejected_tool_call"][data-call="k1"] .meaning')).toBe(' · skip it: it is not run again');
    expect(await page.textContent('#tool-calls li[data-call="k1"]')).toContain('cut off when its process stopped: it may or may not have taken effect');
    await page.fill(`${give} textarea[name="result"]`, 'a.md holds the note.');
    await page.click(`${give} button`);
    await expect.poll(() => session.view().state, { timeout: 30_000 }).toBe('waiting_user.review_artifact');
    expect(told).toBe('(A person gave this result by hand: the call was cut off when the process running it stopped.)\na.md holds the note.');
    expect(notes.calls()).toEqual([{ tool: 'slow_write', args: { path: 'a.md' } }]);
  }, 120_000);
});
