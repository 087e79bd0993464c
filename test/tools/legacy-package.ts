/**
 * A package whose worker calls a server of a revision before 2026-07-28 (test/mcp/servers/legacy.mjs,
 * built with the official MCP SDK), which asks a person on the live connection inside its call,
 * and what that server received.
 */
import { legacyServerPath } from '../mcp/servers.js';
import { writeMcpPackage } from './mcp-package.js';

export interface LegacyPackage {
  /** The folder holding the package folder (createRuntime's packagesDir). */
  packagesDir: string;
  /** Every call the server received (`{ tool }`) and every answer its `ask` got (`{ answered }`), in order. */
  reached(): Record<string, string>[];
}

/** The `asks` package: one worker, `asker`, whose calls of the server `legacy` run without a person's approval. */
export function legacyPackage(): LegacyPackage {
  const written = writeMcpPackage<Record<string, string>>({
    id: 'asks',
    title: 'Asks',
    description: 'Asks a person through an MCP server of an earlier revision.',
    worker: { id: 'asker', description: 'Asks for a confirmation.', prompt: 'Ask for a confirmation, then submit a note saying what you were told.' },
    server: 'legacy',
    entry: (log) => ({ command: process.execPath, args: [legacyServerPath()], env: { LEGACY_LOG: log }, approval: 'never' }),
  });
  return { packagesDir: written.packagesDir, reached: written.lines };
}
