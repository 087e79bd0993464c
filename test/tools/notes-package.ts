/** A package whose worker keeps notes through the notes MCP server (test/tools/servers/notes.mjs), and what that server received. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scriptedCall } from '../../src/testing.js';

const NOTES_SERVER = fileURLToPath(new URL('./servers/notes.mjs', import.meta.url));

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
  const root = mkdtempSync(join(tmpdir(), 'steward-notes-'));
  const dir = join(root, 'packages', 'notes');
  mkdirSync(join(dir, 'workers'), { recursive: true });
  const log = join(root, 'calls.jsonl');
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      schemaVersion: 1,
      id: 'notes',
      title: 'Notes',
      description: 'Keeps notes through an MCP server.',
      workers: ['keeper'],
      mcpServers: {
        notes: {
          command: process.execPath,
          args: [NOTES_SERVER],
          env: { NOTES_LOG: '${NOTES_LOG}', NOTES_WRITE_DESCRIPTION: '${NOTES_WRITE_DESCRIPTION}' },
          ...manifest,
        },
      },
    }),
  );
  writeFileSync(
    join(dir, 'workers', 'keeper.md'),
    '---\nid: keeper\ntitle: Keeper\ndescription: Keeps notes.\ninputTags: [request]\noutputTags: [note]\ntools: ["notes.*"]\n---\nKeep the notes the request asks for, then submit a note saying what you did.\n',
  );
  return {
    packagesDir: join(root, 'packages'),
    env: { NOTES_LOG: log, NOTES_WRITE_DESCRIPTION: '' },
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { tool: string; args: Record<string, unknown> })
        : [],
  };
}

export const runKeeper = () => scriptedCall('run_worker', { workerId: 'keeper', reason: 'Keep the notes.', requiresApproval: false });
