/**
 * `steward run` on a real pseudo-terminal (util-linux `script`): type keys, wait for text on
 * the screen. The screen is kept with the ANSI escapes the prompts write stripped.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cliBin } from './cli-process.js';

export const ENTER = '\r';
export const DOWN = '\x1b[B';
export const CTRL_C = '\x03';
/**
 * The request prompt once it reads keys. The note above it says "Describe the work you want." too,
 * before the prompt has the terminal: keys typed then are lost, so wait for the prompt's own line.
 */
export const REQUEST_PROMPT = /Describe the work you want \(Ctrl-C/;
export const hasScript = existsSync('/usr/bin/script');

// eslint-disable-next-line no-control-regex -- strips the ANSI escapes the prompts write
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

export interface Terminal {
  exited: Promise<number | null>;
  readonly screen: string;
  /** Waits until `pattern` appears on the screen after the last match. */
  waitFor(pattern: RegExp, what: string): Promise<void>;
  type(keys: string): Promise<void>;
  kill(): void;
}

/** `steward <args> --db DB` on a pseudo-terminal of 120×60, with no OpenAI settings or editor unless `extraEnv` gives them. */
export function terminal(args: string, db: string, extraEnv: Record<string, string> = {}): Terminal {
  // A pty that `script` opens without a parent terminal has no size: give it one.
  const command = `stty cols 120 rows 60; ${JSON.stringify(process.execPath)} ${JSON.stringify(cliBin())} ${args} --db ${JSON.stringify(db)}`;
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  delete env.EDITOR;
  delete env.VISUAL;
  Object.assign(env, extraEnv);
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (d: Buffer) => (screen += stripAnsi(d.toString())));
  child.stderr.on('data', (d: Buffer) => (screen += stripAnsi(d.toString())));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let cursor = 0;
  return {
    exited,
    get screen() {
      return screen;
    },
    async waitFor(pattern, what) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const match = pattern.exec(screen.slice(cursor));
        if (match) {
          cursor += match.index + match[0].length;
          return;
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen so far:\n${screen.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async type(keys) {
      child.stdin.write(keys);
      await new Promise((r) => setTimeout(r, 150));
    },
    kill: () => child.kill('SIGKILL'),
  };
}
