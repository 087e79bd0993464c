/** A package whose worker keeps notes through the notes MCP server (test/tools/servers/notes.mjs), and what that server received. */
import type { ChatMessage, ModelReply, ModelRequest } from '../../src/machine.js';
import { scriptedCall } from '../../src/testing.js';
import { testServer } from '../support/server-build.js';
import { writeMcpPackage } from './mcp-package.js';

export interface NotesPackage {
  /** The folder holding the package folder (createRuntime's packagesDir). */
  packagesDir: string;
  /** The environment the tool host reads `${VAR}` from. */
  env: Record<string, string>;
  /** Every call the server received, in order. */
  calls(): { tool: string; args: Record<string, unknown> }[];
}

/**
 * The `notes` package: one worker, `keeper`, that may call every tool of the server `notes`.
 * `manifest` adds settings to the server's entry (approval, tools, trusted).
 */
export function notesPackage(manifest: Record<string, unknown> = {}): NotesPackage {
  const written = writeMcpPackage<{ tool: string; args: Record<string, unknown> }>({
    id: 'notes',
    title: 'Notes',
    description: 'Keeps notes through an MCP server.',
    worker: { id: 'keeper', description: 'Keeps notes.', prompt: 'Keep the notes the request asks for, then submit a note saying what you did.' },
    server: 'notes',
    entry: () => ({
      command: process.execPath,
      args: [testServer('test/tools/servers/notes.mjs')],
      env: { NOTES_LOG: '${NOTES_LOG}', NOTES_WRITE_DESCRIPTION: '${NOTES_WRITE_DESCRIPTION}' },
      ...manifest,
    }),
  });
  return { packagesDir: written.packagesDir, env: { NOTES_LOG: written.log, NOTES_WRITE_DESCRIPTION: '' }, calls: written.lines };
}

export const runKeeper = () => scriptedCall('run_worker', { workerId: 'keeper', reason: 'Keep the notes.', requiresApproval: false });

/** The tool results a model request carries (what the worker's next round read), by call id. */
export const toolResultsIn = (request: ModelRequest): Record<string, string> =>
  Object.fromEntries(
    request.messages.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content)]),
  );

/** A worker's reply that submits `note` (the round after its tool calls). */
export const submitReply = (note: string): ModelReply => ({
  content: null,
  toolCalls: [{ id: 's1', type: 'function', function: { name: 'submit', arguments: JSON.stringify({ outputs: { note } }) } }],
});
