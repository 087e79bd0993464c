/**
 * The tool host against real servers over stdio, built with the official server SDK
 * (servers/stdio.mjs, servers/legacy.mjs; its questions on the live connection are
 * tool-host-live.test.ts's). Time limits here are short but far above what they wait for; no
 * test asserts a duration.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { McpServerError, McpToolLimitError, McpVariableError } from '../../src/mcp/errors.js';
import { createToolHost } from '../../src/mcp/tool-host.js';
import { isRunning, legacyServer, resultText, serverChildren, stdioServer } from './servers.js';

const SECRET = 'sekret-value-4711';
const env = { PATH: process.env.PATH, API_TOKEN: SECRET, HOME: '/home/someone', OTHER_SECRET: 'not-for-the-server' };

describe('a local server', () => {
  const lines: string[] = [];
  const host = createToolHost({ env, log: (line) => lines.push(line) });
  afterAll(() => host.close());
  const server = stdioServer('local', { env: { API_TOKEN: '${API_TOKEN}' } });

  it('lists its tools with their schemas, annotations and a digest, and runs one', async () => {
    const tools = await host.listTools(server);
    const echo = tools.find((tool) => tool.name === 'echo')!;
    expect(echo).toMatchObject({
      server: 'local',
      name: 'echo',
      title: 'Echo',
      description: 'Returns its text.',
      inputSchema: { type: 'object', required: ['text'] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    expect(echo.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(resultText(await host.callTool({ server, tool: 'echo', arguments: { text: 'hi', times: 2 } }))).toBe('hihi');
  });

  it('shares one process between callers of the same server', async () => {
    const [a, b] = await Promise.all([
      host.callTool({ server, tool: 'pid', arguments: {} }),
      host.callTool({ server: stdioServer('local', { env: { API_TOKEN: '${API_TOKEN}' } }), tool: 'pid', arguments: {} }),
    ]);
    expect(resultText(a)).toBe(resultText(b));
  });

  it("checks arguments with the SDK validator, giving the schema's message, and calls nothing when they are wrong", async () => {
    const echo = (await host.listTools(server)).find((tool) => tool.name === 'echo')!;
    expect(host.validateArguments(echo, { text: 'ok' })).toBeNull();
    expect(host.validateArguments(echo, { text: '' })).toBe(
      'The arguments of local.echo do not match its input schema: arguments/text must NOT have fewer than 1 characters. Fix them and call the tool again.',
    );
    expect(host.validateArguments(echo, { times: 9 })).toMatch(/must have required property 'text'.*must be <= 3/);
    const outcome = await host.callTool({ server, tool: 'echo', arguments: { text: 42 } });
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: { reason: 'invalid_arguments', message: expect.stringContaining('arguments/text must be string') },
    });
  });

  it('gives the server its declared env and PATH only, ${VAR} expanded', async () => {
    expect(JSON.parse(resultText(await host.callTool({ server, tool: 'env_keys', arguments: {} })))).toEqual(['API_TOKEN', 'PATH']);
    expect(resultText(await host.callTool({ server, tool: 'env_value', arguments: { name: 'PATH' } }))).toBe(process.env.PATH);
  });

  it('hides the value of a ${VAR} in results and log lines, and keeps log lines safe for a terminal', async () => {
    const leak = await host.callTool({ server, tool: 'leak', arguments: {} });
    expect(leak).toMatchObject({ kind: 'result', isError: true, text: 'rejected token [value of API_TOKEN]' });
    await host.callTool({ server, tool: 'stderr', arguments: { line: `token ${SECRET} \u001b[2J\u202Eend` } });
    // stderr is its own pipe: the line may come after the result.
    await vi.waitFor(() => expect(lines).toContain('MCP server "local": stderr: token [value of API_TOKEN] \u241b[2J<U+202E>end'), { timeout: 10_000 });
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('describes parts that are not text, and marks a tool error', async () => {
    expect(resultText(await host.callTool({ server, tool: 'mixed', arguments: {} }))).toBe(
      'a chart:\n[image: image/png, 3 bytes]\n[resource link: report.csv <file:///tmp/report.csv> (text/csv)]',
    );
    expect(await host.callTool({ server, tool: 'fails', arguments: {} })).toMatchObject({ kind: 'result', isError: true, text: 'disk full' });
  });

  it('names the tools a server has when asked for one it has not', async () => {
    const outcome = await host.callTool({ server, tool: 'nope', arguments: {} });
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: { reason: 'unknown_tool', message: expect.stringMatching(/has no tool "nope"\. Its tools: echo, env_keys, .*deploy\./) },
    });
  });

  it('returns input_required with the requests and state, and completes the call with the answers', async () => {
    const asked = await host.callTool({ server, tool: 'deploy', arguments: { env: 'prod' } });
    expect(asked).toMatchObject({
      kind: 'input_required',
      requests: { confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Deploy to prod?', requestedSchema: { required: ['confirm'] } } } },
      requestState: 'deploy:prod',
    });
    const requestState = asked.kind === 'input_required' ? asked.requestState : undefined;
    const answered = await host.callTool({
      server,
      tool: 'deploy',
      arguments: { env: 'prod' },
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      requestState,
    });
    expect(resultText(answered)).toBe('deployed to prod');
  });

  it('cuts a long result at limits.resultChars and says so', async () => {
    const small = createToolHost({ env, limits: { resultChars: 1_000 } });
    try {
      const outcome = await small.callTool({ server, tool: 'big', arguments: { megabytes: 1 } });
      expect(outcome).toMatchObject({ kind: 'result', truncated: true });
      const text = resultText(outcome);
      expect(text.length).toBeLessThanOrEqual(1_000);
      expect(text).toMatch(/^x+\n\[… cut: the result has 1048576 characters, only the first 1000 are shown\./);
    } finally {
      await small.close();
    }
  });
});

describe('a server that misbehaves', () => {
  it('fails a hanging call with a timeout, and serves the next call', async () => {
    const host = createToolHost({ env });
    try {
      const server = stdioServer('slow', { timeoutMs: 1_500 });
      const pid = resultText(await host.callTool({ server, tool: 'pid', arguments: {} }));
      const outcome = await host.callTool({ server, tool: 'hang', arguments: {} });
      expect(outcome).toMatchObject({ kind: 'failed', error: { reason: 'timeout', message: expect.stringContaining('did not answer within 1500 ms') } });
      expect(resultText(await host.callTool({ server, tool: 'pid', arguments: {} }))).toBe(pid);
    } finally {
      await host.close();
    }
  });

  it('is cancelled through the signal', async () => {
    const host = createToolHost({ env });
    try {
      const server = stdioServer('slow');
      await host.listTools(server);
      const controller = new AbortController();
      const call = host.callTool({ server, tool: 'hang', arguments: {}, signal: controller.signal });
      controller.abort();
      expect(await call).toMatchObject({ kind: 'failed', error: { reason: 'cancelled' } });
    } finally {
      await host.close();
    }
  });

  it('fails a call during which the server exits, and restarts it on the next call', async () => {
    const host = createToolHost({ env });
    try {
      const server = stdioServer('crashy');
      const before = Number(resultText(await host.callTool({ server, tool: 'pid', arguments: {} })));
      expect(await host.callTool({ server, tool: 'exit', arguments: {} })).toMatchObject({ kind: 'failed', error: { reason: 'server_stopped' } });
      const after = Number(resultText(await host.callTool({ server, tool: 'pid', arguments: {} })));
      expect(after).not.toBe(before);
      expect(isRunning(before)).toBe(false);
    } finally {
      await host.close();
    }
  });

  it('waits before restarting a server that stops again before any call succeeded', async () => {
    const host = createToolHost({ env, restartBackoff: { initialMs: 600_000 } });
    try {
      const server = stdioServer('crashy');
      expect(await host.callTool({ server, tool: 'exit', arguments: {} })).toMatchObject({ error: { reason: 'server_stopped' } });
      expect(await host.callTool({ server, tool: 'exit', arguments: {} })).toMatchObject({ error: { reason: 'server_stopped' } });
      const refused = await host.callTool({ server, tool: 'pid', arguments: {} });
      expect(refused).toMatchObject({
        kind: 'failed',
        error: { reason: 'server_unavailable', message: expect.stringMatching(/stopped 2 times in a row; it is started again on a use in \d+ s/) },
      });
      await expect(host.listTools(server)).rejects.toSatisfy((error) => McpServerError.isInstance(error) && error.reason === 'backoff');
    } finally {
      await host.close();
    }
  });

  it('fails a 50 MB answer without reading it, and restarts the server', async () => {
    const host = createToolHost({ env, limits: { messageBytes: 1024 * 1024 } });
    try {
      const server = stdioServer('huge', { timeoutMs: 30_000 });
      const before = resultText(await host.callTool({ server, tool: 'pid', arguments: {} }));
      const heap = process.memoryUsage().heapUsed;
      const outcome = await host.callTool({ server, tool: 'big', arguments: { megabytes: 50 } });
      expect(outcome).toMatchObject({ kind: 'failed', error: { reason: 'too_large', message: expect.stringContaining('limits.messageBytes') } });
      // Far below the answer's 50 MB: at most the 1 MB the host read, and what a call costs.
      expect(process.memoryUsage().heapUsed - heap).toBeLessThan(25 * 1024 * 1024);
      expect(resultText(await host.callTool({ server, tool: 'pid', arguments: {} }))).not.toBe(before);
    } finally {
      await host.close();
    }
  });

  it('refuses a server that lists 10,000 tools with a typed error', async () => {
    const host = createToolHost({ env });
    try {
      const error = await host.listTools(stdioServer('many', { args: ['--tools', '10000'] })).catch((e: unknown) => e);
      expect(McpToolLimitError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ server: 'many', limit: 'mcp.maxTools', max: 128, code: 'limit_exceeded' });
      expect((error as Error).message).toMatch(/lists more than 128 tools \(limits\.maxTools\); none were taken/);
    } finally {
      await host.close();
    }
  });

  it('survives lines on stdout that are not MCP: the call fails, the host does not crash, the server serves on', async () => {
    const lines: string[] = [];
    const host = createToolHost({ env, log: (line) => lines.push(line) });
    try {
      const server = stdioServer('noisy', { timeoutMs: 1_500 });
      const pid = resultText(await host.callTool({ server, tool: 'pid', arguments: {} }));
      expect(await host.callTool({ server, tool: 'garbage', arguments: {} })).toMatchObject({ kind: 'failed', error: { reason: 'timeout' } });
      expect(resultText(await host.callTool({ server, tool: 'pid', arguments: {} }))).toBe(pid);
      expect(lines.some((line) => line.startsWith('MCP server "noisy": connection error:'))).toBe(true);
    } finally {
      await host.close();
    }
  });

  it('is a typed start failure when the program is no MCP server', async () => {
    // It never answers the handshake, however long it is given: a short start limit keeps the test short.
    const host = createToolHost({ env, startTimeoutMs: 1_000 });
    try {
      const server = {
        name: 'mute',
        config: { command: process.execPath, args: ['-e', 'setInterval(() => console.log("hello"), 50)'], trusted: true, timeoutMs: 1_000 },
      };
      const error = await host.listTools(server).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpServerError);
      expect(error).toMatchObject({ server: 'mute', reason: 'start_failed' });
    } finally {
      await host.close();
    }
  });
});

describe('variables and secrets', () => {
  it('names a missing ${VAR} and the server, never a value, and fails a call with it', async () => {
    const host = createToolHost({ env });
    try {
      const server = stdioServer('needy', { env: { TOKEN: '${MISSING_TOKEN}', KNOWN: '${API_TOKEN}' } });
      const error = await host.listTools(server).catch((e: unknown) => e);
      expect(McpVariableError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ server: 'needy', variable: 'MISSING_TOKEN', field: 'env.TOKEN', code: 'user_error' });
      expect((error as Error).message).toBe(
        'MCP server "needy": its env.TOKEN uses ${MISSING_TOKEN}, which is not set. Set MISSING_TOKEN in the environment Steward runs in, or change mcpServers.needy.env.TOKEN in the package\'s manifest.',
      );
      const outcome = await host.callTool({ server, tool: 'pid', arguments: {} });
      expect(outcome).toMatchObject({ kind: 'failed', error: { reason: 'configuration', message: (error as Error).message } });
    } finally {
      await host.close();
    }
  });

  it('hides a secret that a start failure would quote', async () => {
    const host = createToolHost({ env });
    try {
      const server = { name: 'lost', config: { command: '/nowhere/${API_TOKEN}/server', trusted: true } };
      const error = await host.listTools(server).catch((e: unknown) => e);
      expect(error).toMatchObject({ reason: 'start_failed' });
      expect((error as Error).message).toContain('/nowhere/[value of API_TOKEN]/server');
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(SECRET);
      const outcome = await host.callTool({ server, tool: 'pid', arguments: {} });
      expect(JSON.stringify(outcome)).not.toContain(SECRET);
    } finally {
      await host.close();
    }
  });

  it('does not believe the annotations of a server that is not trusted', async () => {
    const host = createToolHost({ env });
    try {
      const trusted = (await host.listTools(stdioServer('same'))).find((tool) => tool.name === 'echo')!;
      const untrusted = (await host.listTools(stdioServer('same', { trusted: false }))).find((tool) => tool.name === 'echo')!;
      expect(trusted.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
      expect(untrusted.annotations).toBeUndefined();
      expect(untrusted.digest).not.toBe(trusted.digest);
    } finally {
      await host.close();
    }
  });
});

describe('close()', () => {
  it('stops every server, leaves no process, and is idempotent', async () => {
    const host = createToolHost({ env });
    const servers = [stdioServer('one'), stdioServer('two'), legacyServer('three')];
    const pids = await Promise.all(servers.slice(0, 2).map(async (server) => Number(resultText(await host.callTool({ server, tool: 'pid', arguments: {} })))));
    await host.listTools(servers[2]!);
    const hanging = host.callTool({ server: servers[0]!, tool: 'hang', arguments: {} });
    await Promise.all([host.close(), host.close()]);
    for (const pid of pids) expect(isRunning(pid), `process ${pid}`).toBe(false);
    expect(serverChildren()).toEqual([]);
    expect(await hanging).toMatchObject({ kind: 'failed' });
    await host.close();
    expect(await host.callTool({ server: servers[0]!, tool: 'pid', arguments: {} })).toMatchObject({ kind: 'failed', error: { reason: 'host_closed' } });
  });
});
