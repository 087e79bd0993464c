/**
 * The tools of the test servers, built with the official server SDK: one factory for the
 * stdio entry (stdio.mjs, a child process of the host) and the Streamable HTTP one (started
 * inside the test process). Each tool is one behaviour a host must survive.
 */
import { inputRequired, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

const text = (value) => ({ content: [{ type: 'text', text: value }] });

/** A fresh server with every test tool; `name` tells the servers apart in a test. */
export function createToolServer(name = 'tools') {
  const server = new McpServer({ name, version: '1.0.0' });

  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns its text.',
      inputSchema: z.object({ text: z.string().min(1), times: z.number().int().min(1).max(3).optional() }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ text: value, times }) => text(value.repeat(times ?? 1)),
  );

  server.registerTool('env_keys', { description: 'The names of its environment variables.' }, async () =>
    text(JSON.stringify(Object.keys(process.env).sort())),
  );

  server.registerTool('env_value', { description: 'One environment variable.', inputSchema: z.object({ name: z.string() }) }, async ({ name: key }) =>
    text(process.env[key] ?? '(unset)'),
  );

  server.registerTool('leak', { description: 'Fails with its token in the message.' }, async () => {
    throw new Error(`rejected token ${process.env.API_TOKEN}`);
  });

  server.registerTool('stderr', { description: 'Writes lines to its stderr.', inputSchema: z.object({ line: z.string() }) }, async ({ line }) => {
    process.stderr.write(`${line}\n`);
    return text('written');
  });

  server.registerTool('hang', { description: 'Never answers.' }, () => new Promise(() => {}));

  server.registerTool('exit', { description: 'Exits the process mid-call.' }, async () => {
    process.exit(3);
  });

  server.registerTool('pid', { description: 'The process id.' }, async () => text(String(process.pid)));

  server.registerTool('big', { description: 'A huge text result.', inputSchema: z.object({ megabytes: z.number() }) }, async ({ megabytes }) =>
    text('x'.repeat(megabytes * 1024 * 1024)),
  );

  server.registerTool('garbage', { description: 'Writes junk on stdout and never answers.' }, () => {
    process.stdout.write('this is not json\n{"jsonrpc": "2.0", "id": "nope"}\n\u001b[2J\n');
    return new Promise(() => {});
  });

  server.registerTool('mixed', { description: 'Text, an image and a resource link.' }, async () => ({
    content: [
      { type: 'text', text: 'a chart:' },
      { type: 'image', data: Buffer.from('png').toString('base64'), mimeType: 'image/png' },
      { type: 'resource_link', uri: 'file:///tmp/report.csv', name: 'report.csv', mimeType: 'text/csv' },
    ],
  }));

  server.registerTool('fails', { description: 'A tool error.' }, async () => ({ content: [{ type: 'text', text: 'disk full' }], isError: true }));

  server.registerTool('deploy', { description: 'Deploys after a person confirms.', inputSchema: z.object({ env: z.string() }) }, async ({ env }, ctx) => {
    const state = ctx.mcpReq.requestState();
    const answer = ctx.mcpReq.inputResponses?.confirm;
    if (state === `deploy:${env}` && answer?.action === 'accept' && answer.content?.confirm === true) return text(`deployed to ${env}`);
    if (state === `deploy:${env}` && answer) return { content: [{ type: 'text', text: 'not confirmed' }], isError: true };
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({
          message: `Deploy to ${env}?`,
          requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
        }),
      },
      requestState: `deploy:${env}`,
    });
  });

  return server;
}
