/**
 * The MCP test servers (test/mcp/servers, test/tools/servers) as the tests start them: each
 * bundled by esbuild into one file with what it imports (the official server SDK, zod), once per
 * set of sources (build-cache.ts). Loading the SDK and zod module by module was most of a
 * server's start, and the tests start servers many times. The SDK is the same code, only in one file. Laid out as in the repository
 * (test/mcp/servers/stdio.mjs, …), so a server's command line still says which one it is (the
 * tests look for leftover processes by that path).
 */
import { join } from 'node:path';
import { cachedBuildSync } from './build-cache.js';
import { buildPrograms } from './program-build.js';

/** The servers a test starts as a process (tool-server.mjs is a part of stdio.mjs, and runs in-process in the HTTP tests). */
const SERVERS = ['test/mcp/servers/stdio.mjs', 'test/mcp/servers/legacy.mjs', 'test/tools/servers/notes.mjs'] as const;
export type TestServer = (typeof SERVERS)[number];

function build(out: string): void {
  buildPrograms(SERVERS, out, {
    bundle: true,
    // CommonJS packages in the bundle require Node's modules by name.
    banner: { js: "import { createRequire as serverCreateRequire } from 'node:module'; const require = serverCreateRequire(import.meta.url);" },
  });
}

let folder: string | undefined;

/**
 * The bundled file of test server `server` (a path from the repository's root), built on first use.
 *
 * @example
 * const config = { command: process.execPath, args: [testServer('test/mcp/servers/stdio.mjs')] };
 */
export function testServer(server: TestServer): string {
  folder ??= cachedBuildSync('mcp-servers', build);
  return join(folder, server);
}
