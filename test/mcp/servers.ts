/** The test servers as the host is given them, and what the tests check about processes. */
import { execFileSync } from 'node:child_process';
import type { McpServerConfig } from '../../src/core/skills/mcp-servers.js';
import type { ServerRef, ToolCallOutcome } from '../../src/mcp/types.js';
import { testServer } from '../support/server-build.js';

/** The stdio test server (servers/stdio.mjs) under `name`, with `extra` settings or arguments. */
export function stdioServer(name: string, extra: Partial<McpServerConfig> & { args?: string[] } = {}): ServerRef {
  const { args = [], ...rest } = extra;
  return { name, config: { command: process.execPath, args: [testServer('test/mcp/servers/stdio.mjs'), ...args], trusted: true, ...rest } as McpServerConfig };
}

/** The 2025-only server (servers/legacy.mjs) under `name`, with `extra` settings (its `env`: LEGACY_LOG). */
export function legacyServer(name: string, extra: Partial<McpServerConfig> = {}): ServerRef {
  return { name, config: { command: process.execPath, args: [legacyServerPath()], trusted: true, ...extra } as McpServerConfig };
}

/** The path of the legacy server, for a package's manifest. */
export const legacyServerPath = (): string => testServer('test/mcp/servers/legacy.mjs');

/** Whether process `pid` still runs. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The text of a `result` outcome; fails the test on any other outcome. */
export function resultText(outcome: ToolCallOutcome): string {
  if (outcome.kind !== 'result') throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  return outcome.text;
}

/** The child processes of this test process that run one of the test servers (ps). */
export function serverChildren(): string[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes('test/mcp/servers/'));
}
