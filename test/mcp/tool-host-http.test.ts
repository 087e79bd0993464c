/**
 * The tool host against a Streamable HTTP server built with the official server SDK
 * (`createMcpHandler`, the same tools as the stdio server), served on 127.0.0.1 inside the
 * test process. It wants a bearer token, which the host gets from a `${VAR}` of its headers.
 */
import { createAdaptorServer } from '@hono/node-server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServerError } from '../../src/mcp/errors.js';
import { createToolHost } from '../../src/mcp/tool-host.js';
import type { ServerRef } from '../../src/mcp/types.js';
import { resultText } from './servers.js';
// @ts-expect-error -- a plain .mjs test server (no declarations): its factory is all this file uses.
import { createToolServer } from './servers/tool-server.mjs';

const TOKEN = 'http-token-0815';
const handler = createMcpHandler(() => (createToolServer as (name: string) => never)('http-tools'));
const app = createAdaptorServer({
  fetch: (request: Request) =>
    request.headers.get('authorization') === `Bearer ${TOKEN}` ? handler.fetch(request) : new Response('unauthorized', { status: 401 }),
  hostname: '127.0.0.1',
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(app.address() as AddressInfo).port}/mcp`;
});
afterAll(() => new Promise<void>((resolve) => app.close(() => resolve())));

const remote = (extra: Record<string, unknown> = {}): ServerRef => ({
  name: 'remote',
  config: { url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' }, trusted: true, ...extra },
});

describe('a remote server over Streamable HTTP', () => {
  const host = createToolHost({ env: { REMOTE_TOKEN: TOKEN } });
  afterAll(() => host.close());

  it('lists its tools with their annotations and runs one, with the token from ${VAR}', async () => {
    const tools = await host.listTools(remote());
    expect(tools.find((tool) => tool.name === 'echo')).toMatchObject({ server: 'remote', annotations: { readOnlyHint: true } });
    expect(resultText(await host.callTool({ server: remote(), tool: 'echo', arguments: { text: 'over http' } }))).toBe('over http');
  });

  it('returns input_required and completes the call with the answers', async () => {
    const asked = await host.callTool({ server: remote(), tool: 'deploy', arguments: { env: 'staging' } });
    expect(asked).toMatchObject({
      kind: 'input_required',
      requests: { confirm: { params: { message: 'Deploy to staging?' } } },
      requestState: 'deploy:staging',
    });
    const answered = await host.callTool({
      server: remote(),
      tool: 'deploy',
      arguments: { env: 'staging' },
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      ...(asked.kind === 'input_required' && asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
    });
    expect(resultText(answered)).toBe('deployed to staging');
  });

  it('fails a hanging call with a timeout and serves the next one', async () => {
    const server = remote({ timeoutMs: 1_500 });
    expect(await host.callTool({ server, tool: 'hang', arguments: {} })).toMatchObject({ kind: 'failed', error: { reason: 'timeout' } });
    expect(resultText(await host.callTool({ server, tool: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
  });
});

describe('a remote server, bounded and with secrets', () => {
  it('fails an answer over limits.messageBytes without reading it whole', async () => {
    const host = createToolHost({ env: { REMOTE_TOKEN: TOKEN }, limits: { messageBytes: 1024 * 1024 } });
    try {
      const outcome = await host.callTool({ server: remote({ timeoutMs: 30_000 }), tool: 'big', arguments: { megabytes: 5 } });
      expect(outcome).toMatchObject({ kind: 'failed', error: { reason: 'too_large', message: expect.stringContaining('limits.messageBytes') } });
    } finally {
      await host.close();
    }
  });

  it('refused at the door: a typed start failure that does not show the token sent', async () => {
    const wrong = 'wrong-token-4242';
    const host = createToolHost({ env: { REMOTE_TOKEN: wrong } });
    try {
      const error = await host.listTools(remote()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpServerError);
      expect(error).toMatchObject({ server: 'remote', reason: 'start_failed' });
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(wrong);
    } finally {
      await host.close();
    }
  });
});
