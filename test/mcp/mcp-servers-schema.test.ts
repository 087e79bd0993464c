import { describe, expect, it } from 'vitest';
import { approvalOf, McpServersSchema, serverList } from '../../src/core/skills/mcp-servers.js';

/** The issues of a refused `mcpServers`, as "path: message". */
function issues(value: unknown): string[] {
  const parsed = McpServersSchema.safeParse(value);
  expect(parsed.success).toBe(false);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe("a manifest's mcpServers", () => {
  it('reads local and remote servers in the shape MCP hosts use, ${VAR} kept as written', () => {
    const parsed = McpServersSchema.parse({
      files: { command: 'node', args: ['server.js'], env: { ROOT: '${DOCS_ROOT}' }, cwd: '/srv', approval: 'never' },
      github: {
        url: 'https://example.com/mcp',
        headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
        tools: { delete_repo: { approval: 'always' } },
        trusted: false,
        timeoutMs: 120_000,
      },
    });
    expect(parsed).toEqual({
      files: { command: 'node', args: ['server.js'], env: { ROOT: '${DOCS_ROOT}' }, cwd: '/srv', approval: 'never', trusted: true },
      github: {
        url: 'https://example.com/mcp',
        headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
        tools: { delete_repo: { approval: 'always' } },
        trusted: false,
        timeoutMs: 120_000,
      },
    });
  });

  it('refuses a server name a tool reference cannot hold, naming the rule', () => {
    expect(issues({ 'my.server': { command: 'node' } })[0]).toMatch(/^my\.server: must be a server name like "github" .*no dot/);
    expect(issues({ Files: { command: 'node' } })[0]).toMatch(/^Files: must be a server name/);
  });

  it('names the allowed fields of the shape a server claims when one is misspelt', () => {
    expect(issues({ files: { command: 'node', enviroment: {} } })).toEqual([
      'files: has unknown field "enviroment": remove it or fix the spelling (allowed fields: command, args, env, cwd, approval, tools, trusted, timeoutMs)',
    ]);
    expect(issues({ gh: { url: 'https://x/mcp', header: {} } })[0]).toContain('(allowed fields: url, headers, approval, tools, trusted, timeoutMs)');
  });

  it('wants exactly one of command and url', () => {
    expect(issues({ x: { command: 'node', url: 'https://x/mcp' } })).toEqual([
      'x: has both "command" and "url": a server is either local (command) or remote (url)',
    ]);
    expect(issues({ x: { args: [] } })[0]).toMatch(/^x: must have "command"/);
    expect(issues({ x: 'node server.js' })[0]).toMatch(/^x: must be a local server \{ command, args\?, env\?, cwd\? \} or a remote one/);
  });

  it('points at the field at fault inside env, headers, tools and limits', () => {
    expect(issues({ x: { command: 'node', env: { 'BAD-NAME': 'v', OK: 3 } } })).toEqual([
      'x.env.BAD-NAME: must be an environment variable name like "API_TOKEN"',
      'x.env.OK: must be a string (write "${VAR}" to pass a variable of the environment Steward runs in)',
    ]);
    expect(issues({ x: { url: 'ftp://example.com' } })).toEqual(['x.url: must be an http:// or https:// URL, e.g. "https://example.com/mcp"']);
    expect(issues({ x: { url: 'https://x/mcp', tools: { t: { approval: 'maybe' } } } })).toEqual([
      'x.tools.t.approval: must be "always" (a person approves every call) or "never" (calls run without waiting)',
    ]);
    expect(issues({ x: { command: 'node', timeoutMs: 0 } })).toEqual(['x.timeoutMs: must be a positive number of milliseconds']);
  });

  it('keeps an env variable named like a property of Object', () => {
    const parsed = McpServersSchema.parse(JSON.parse('{"x":{"command":"node","env":{"__proto__":"a","constructor":"b"}}}'));
    const env = (parsed.x as { env: Record<string, string> }).env;
    expect(Object.hasOwn(env, '__proto__') && Object.hasOwn(env, 'constructor')).toBe(true);
  });

  it('lists the servers in order, and says per tool whether a call waits for approval', () => {
    const servers = McpServersSchema.parse({
      files: { command: 'node', approval: 'never', tools: { rm: { approval: 'always' }, constructor: {} } },
      web: { url: 'https://example.com/mcp' },
    });
    expect(serverList(servers).map((s) => s.name)).toEqual(['files', 'web']);
    const files = serverList(servers)[0]!.config;
    expect([approvalOf(files, 'rm'), approvalOf(files, 'ls'), approvalOf(files, 'constructor'), approvalOf(files, 'toString')]).toEqual([
      'always',
      'never',
      'never',
      'never',
    ]);
    expect(approvalOf(serverList(servers)[1]!.config, 'fetch')).toBeUndefined();
  });
});
