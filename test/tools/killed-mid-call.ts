/**
 * A session "killed" whose process died during its worker's slow_write call, as a crash leaves
 * it: test/tools/fixtures/call-then-hang.ts runs the notes package on SQLite until the server
 * has seen the call, then it is SIGKILLed. The server never answered: resumed, the session
 * waits in tool_interrupted.
 */
import { spawn } from 'node:child_process';
import { expect, vi } from 'vitest';
import { testScript } from '../support/script-build.js';
import type { NotesPackage } from './notes-package.js';

export async function killedMidCall(notes: NotesPackage, db: string): Promise<void> {
  const child = spawn(process.execPath, [testScript('test/tools/fixtures/call-then-hang.ts'), db, notes.packagesDir, notes.env.NOTES_LOG!], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await vi.waitFor(() => expect(notes.calls(), stderr).toEqual([{ tool: 'slow_write', args: { path: 'a.md' } }]), { timeout: 60_000, interval: 100 });
  } finally {
    child.kill('SIGKILL');
  }
  await exited;
}
