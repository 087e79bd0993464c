/**
 * A server of the 2025 revisions only (the initialize handshake, no server/discover): it asks
 * for input on the live connection (`elicitation/create`), as servers did before input_required.
 * `ask` asks to confirm and says what it was answered (the action, and an accept's content);
 * `ask_twice` asks two questions, one after the other, in one call;
 * `wait` answers only once `release` is called, so a test can have a call under way for as long
 * as it needs. When LEGACY_LOG is set, every call (`{ tool }`) and every answer `ask` received
 * (`{ answered: action }`) is appended to that file, one JSON line each: a test sees exactly what
 * reached the server.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const record = (line) => process.env.LEGACY_LOG && appendFileSync(process.env.LEGACY_LOG, `${JSON.stringify(line)}\n`);
const text = (value) => ({ content: [{ type: 'text', text: value }] });
let release = () => {};
const released = new Promise((resolve) => (release = resolve));

const server = new McpServer({ name: 'legacy', version: '1.0.0' });
server.registerTool('ask', { description: 'Asks the user to confirm.' }, async (ctx) => {
  record({ tool: 'ask' });
  const answer = await ctx.mcpReq.elicitInput({
    message: 'Really?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });
  record({ answered: answer.action });
  return text(`the answer was ${answer.action}${answer.content ? ` ${JSON.stringify(answer.content)}` : ''}`);
});
server.registerTool('ask_twice', { description: 'Asks twice in one call.' }, async (ctx) => {
  record({ tool: 'ask_twice' });
  const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
  const first = await ctx.mcpReq.elicitInput({ message: 'First?', requestedSchema: schema });
  const second = await ctx.mcpReq.elicitInput({ message: 'Second?', requestedSchema: schema });
  return text(`${first.action} then ${second.action}`);
});
server.registerTool('wait', { description: 'Answers once release is called.' }, async () => (record({ tool: 'wait' }), await released, text('released')));
server.registerTool('release', { description: 'Lets every wait answer.' }, async () => (record({ tool: 'release' }), release(), text('done')));
await server.connect(new StdioServerTransport());
