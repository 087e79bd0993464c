/**
 * The story the pinning tests tell on each store: a session of a copy of the bundled `tiny`
 * package waits in approve_step; then the worker's prompt is edited on disk.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundledPackagesDir } from '../../src/skills/loader.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { ModelRequest } from '../../src/core/models/model.js';

export const OLD_PROMPT = 'You are the echo worker of a tiny test package.';
export const NEW_PROMPT = 'You are the EDITED echo worker.';

/** A packages folder holding a copy of `tiny`; returns its path. */
export function copyTiny(root: string): string {
  cpSync(join(bundledPackagesDir, 'tiny'), join(root, 'tiny'), { recursive: true });
  return root;
}

/** Edits the echo worker's prompt in the copy. */
export function editEchoPrompt(root: string): void {
  const file = join(root, 'tiny', 'workers', 'echo.md');
  writeFileSync(file, readFileSync(file, 'utf8').replace(OLD_PROMPT, NEW_PROMPT));
}

/** The manager proposes the echo worker and asks for approval. */
export const proposeEcho = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true })] },
  ]);

/** The echo worker submits a note. */
export const echoSubmits = (steps = 1) =>
  new ScriptedModel(Array.from({ length: steps }, () => ({ agent: 'worker' as const, toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } })] })));

/** The system prompt a worker call was given. */
export const systemPrompt = (request: ModelRequest | undefined): string => JSON.stringify(request?.messages[0] ?? null);
