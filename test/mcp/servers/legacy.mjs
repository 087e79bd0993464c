/**
 * A server of the 2025 revisions only (the initialize handshake, no server/discover): it asks
 * for input on the live connection (`elicitation/create`), as servers did before input_required.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const server = new McpServer({ name: 'legacy', version: '1.0.0' });
server.registerTool('ask', { description: 'Asks the user to confirm.' }, async (ctx) => {
  const answer = await ctx.mcpReq.elicitInput({
    message: 'Really?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });
  return { content: [{ type: 'text', text: `the answer was ${answer.action}` }] };
});
await server.connect(new StdioServerTransport());
