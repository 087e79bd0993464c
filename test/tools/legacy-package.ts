/**
 * A package whose worker calls a server of a revision before 2026-07-28 (test/mcp/servers/legacy.mjs,
 * built with the official MCP SDK), which asks a person on the live connection inside its call,
 * and what that server received.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEGACY_SERVER_PATH } from '../mcp/servers.js';

export interface LegacyPackage {
  /** The folder holding the package folder (createRuntime's packagesDir). */
  packagesDir: string;
  /** Every call the server received (`{ tool }`) and every answer its `ask` got (`{ answered }`), in order. */
  reached(): Record<string, string>[];
}

/** The `asks` package: one worker, `asker`, whose calls of the server `legacy` run without a person's approval. */
export function legacyPackage(): LegacyPackage {
  const root = mkdtempSync(join(tmpdir(), 'steward-asks-'));
  const dir = join(root, 'packages', 'asks');
  mkdirSync(join(dir, 'workers'), { recursive: true });
  const log = join(root, 'calls.jsonl');
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      schemaVersion: 1,
      id: 'asks',
      title: 'Asks',
      description: 'Asks a person through an MCP server of an earlier revision.',
      workers: ['asker'],
      mcpServers: { legacy: { command: process.execPath, args: [LEGACY_SERVER_PATH], env: { LEGACY_LOG: log }, approval: 'never' } },
    }),
  );
  writeFileSync(
    join(dir, 'workers', 'asker.md'),
    '---\nid: asker\ntitle: Asker\ndescription: Asks for a confirmation.\ninputTags: [request]\noutputTags: [note]\ntools: ["legacy.*"]\n---\nAsk for a confirmation, then submit a note saying what you were told.\n',
  );
  return {
    packagesDir: join(root, 'packages'),
    reached: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as Record<string, string>)
        : [],
  };
}
