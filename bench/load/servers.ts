/** The benchmark's `steward serve` processes: start, ask for figures, close, kill. */
import { fork, type ChildProcess } from 'node:child_process';
import { compileServer, ROOT } from './compile-server.js';
import { profileDir } from './cpu-profile.js';
import type { DriverMessage, ServerConfig, ServerMessage, ServerStats } from './server-process.js';

export interface ServerProcess {
  url: string;
  pid: number;
  stats(options?: { gc?: boolean; reset?: boolean }): Promise<ServerStats>;
  close(): Promise<void>;
  /** SIGKILL: no shutdown, no lease given back. */
  kill(): Promise<void>;
}

export type StartServer = (config: ServerConfig) => Promise<ServerProcess>;

/** Compiles the sources once (compile-server.ts); the functions that start a Steward server and the floor (floor-process.ts) from them. */
export async function compiledServers(): Promise<{ steward: StartServer; floor: StartServer }> {
  const scripts = await compileServer();
  return { steward: (config) => startServer(scripts.steward, config), floor: (config) => startServer(scripts.floor, config) };
}

async function startServer(script: string, config: ServerConfig): Promise<ServerProcess> {
  const profiles = profileDir();
  const child: ChildProcess = fork(script, [], {
    cwd: ROOT,
    // LOAD_CPU_PROF=DIR: each server writes a CPU profile there when it closes (where its time goes).
    // LOAD_SERVER_FLAGS: more node flags for the servers only (e.g. a V8 heap setting to try).
    execArgv: [
      '--expose-gc',
      ...(profiles ? ['--cpu-prof', '--cpu-prof-dir', profiles] : []),
      ...(process.env.LOAD_SERVER_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
    ],
    env: { ...process.env, LOAD_SERVER_CONFIG: JSON.stringify(config), STEWARD_DURABILITY: process.env.STEWARD_DURABILITY ?? '' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (part: Buffer) => (stderr = (stderr + part.toString()).slice(-4000)));
  let killed = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A server that dies by itself is a finding: say what it printed.
  child.once('exit', (code, signal) => {
    if (!killed && code !== 0) process.stderr.write(`load server ${config.owner} exited by itself (${code ?? signal}):\n${stderr}\n`);
  });
  const ready = await new Promise<Extract<ServerMessage, { type: 'ready' }>>((resolve, reject) => {
    child.on('message', (message: ServerMessage) => {
      if (message.type === 'ready') resolve(message);
    });
    child.once('exit', (code) => reject(new Error(`load server exited (${code}) before it was ready: ${stderr}`)));
  });
  const ask = (message: DriverMessage) => child.send(message);
  return {
    url: ready.url,
    pid: ready.pid,
    stats: (options = {}) =>
      new Promise<ServerStats>((resolve) => {
        const on = (message: ServerMessage) => {
          if (message.type !== 'stats') return;
          child.off('message', on);
          resolve(message.stats);
        };
        child.on('message', on);
        ask({ type: 'stats', ...options });
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) ask({ type: 'close' });
      await exited;
    },
    kill: async () => {
      killed = true;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
