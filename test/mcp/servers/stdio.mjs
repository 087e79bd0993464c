/**
 * The test tool server over stdio (a child process of the host). `--tools N` serves N
 * trivial tools instead; `--noise` writes junk on stdout before it serves.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createToolServer } from './tool-server.mjs';

const count = process.argv.indexOf('--tools');
if (count > 0) {
  serveStdio(() => {
    const server = new McpServer({ name: 'many', version: '1.0.0' });
    for (let i = 0; i < Number(process.argv[count + 1]); i++) server.registerTool(`tool_${i}`, { description: `Tool ${i}.` }, async () => ({ content: [] }));
    return server;
  });
} else {
  serveStdio(() => createToolServer('stdio-tools'));
}
