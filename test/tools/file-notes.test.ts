/**
 * The bundled file-notes package with the real MCP filesystem server from npm
 * (@modelcontextprotocol/server-filesystem), on the offline demo model: looking at the folder
 * runs at once, the write waits for a person; approved, the file is in the folder the session
 * names; rejected, nothing is written and the worker is told why.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

async function fileNotes(extra: Partial<Parameters<typeof createRuntime>[0]> = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'steward-files-'));
  const runtime = createRuntime({ model: new DemoModel(), toolHost: { env: { ...process.env, STEWARD_FILES_DIR: folder }, log: () => {} }, ...extra });
  runtimes.push(runtime);
  const session = await runtime.createSession({ packageId: 'file-notes' });
  const proposed = await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
  expect(proposed.ok && proposed.view.state).toBe('waiting_user.approve_step');
  const approved = await session.send({ type: 'user_approved_next_step' });
  return { folder, session, approved };
}

describe('the bundled file-notes package (MCP filesystem server, demo model)', { timeout: 120_000 }, () => {
  it('lists the folder without asking, waits for the write, and writes the file once approved; each call and decision is a span', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const { folder, session, approved } = await fileNotes({ tracerProvider: provider });
    expect(approved.ok && approved.view.state).toBe('waiting_user.approve_tool');
    const [write] = session.view().toolCalls ?? [];
    expect(write).toMatchObject({ server: 'files', tool: 'write_file', status: 'pending', approvalBy: 'default', arguments: { path: 'note.md' } });
    expect(readdirSync(folder)).toEqual([]);
    const ran = await session.send({ type: 'user_approved_tool_call', callId: write!.callId });
    expect(ran.ok && ran.view.state).toBe('waiting_user.review_artifact');
    expect(readFileSync(join(folder, 'note.md'), 'utf8')).toContain('This text was written by the offline demo model');
    const transcript = await session.transcript('worker');
    // The folder was listed (a read: it ran without asking) before the write.
    const results = transcript.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results).toHaveLength(3); // list_directory, write_file, submit
    expect(results[1]).toMatch(/note\.md/);

    // OpenTelemetry: each call that ran is an execute_tool span (GenAI and MCP attributes); the person's decision, a decision span.
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const calls = spans.filter((s) => s.attributes['gen_ai.tool.type'] === 'extension');
    expect(calls.map((s) => [s.name, s.attributes['mcp.method.name'], s.attributes['steward.tool.outcome']])).toEqual([
      ['execute_tool files.list_directory', 'tools/call', 'result'],
      ['execute_tool files.write_file', 'tools/call', 'result'],
    ]);
    const decision = spans.find((s) => s.name === 'steward.decision approve_tool' && s.attributes['gen_ai.tool.call.id'] === write!.callId);
    expect(decision?.attributes).toMatchObject({ 'steward.decision.event': 'user_approved_tool_call', 'gen_ai.tool.name': 'files.write_file' });
  });

  it('writes nothing when the person rejects the write; the worker reads why', async () => {
    const { folder, session, approved } = await fileNotes();
    expect(approved.ok && approved.view.state).toBe('waiting_user.approve_tool');
    const [write] = session.view().toolCalls ?? [];
    const rejected = await session.send({ type: 'user_rejected_tool_call', callId: write!.callId, reason: 'Not in this folder.' });
    expect(rejected.ok && rejected.view.state).toBe('waiting_user.review_artifact');
    expect(existsSync(join(folder, 'note.md'))).toBe(false);
    const results = (await session.transcript('worker')).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results).toContain('Error: a person rejected this call; it did not run. Their reason: Not in this folder.');
  });

  it('each session names its own folder (toolVariables): one runtime, two sessions, two folders, two servers', async () => {
    const runtime = createRuntime({ model: new DemoModel(), toolHost: { log: () => {} } });
    runtimes.push(runtime);
    const folders = [mkdtempSync(join(tmpdir(), 'steward-files-a-')), mkdtempSync(join(tmpdir(), 'steward-files-b-'))];
    for (const [i, folder] of folders.entries()) {
      const session = await runtime.createSession({ packageId: 'file-notes', toolVariables: { STEWARD_FILES_DIR: folder } });
      await session.send({ type: 'user_submitted_input', text: `Note ${i}.` });
      const approved = await session.send({ type: 'user_approved_next_step' });
      expect(approved.ok && approved.view.state).toBe('waiting_user.approve_tool');
      const [write] = session.view().toolCalls ?? [];
      const ran = await session.send({ type: 'user_approved_tool_call', callId: write!.callId });
      expect(ran.ok && ran.view.state).toBe('waiting_user.review_artifact');
    }
    expect(folders.map((folder) => readdirSync(folder))).toEqual([['note.md'], ['note.md']]);
  });

  it.each([
    [{ 'NOT A NAME': 'x' }, /is not a variable name/],
    [{ STEWARD_FILES_DIR: 'a\nb' }, /must be one line/],
  ])('toolVariables are checked when the session is created (%#)', async (toolVariables, message) => {
    const runtime = createRuntime({ model: new DemoModel() });
    runtimes.push(runtime);
    await expect(runtime.createSession({ packageId: 'file-notes', toolVariables })).rejects.toThrow(message);
  });
});
