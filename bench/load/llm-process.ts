/**
 * The load benchmark's model server in a process of its own, as a hosted model is on other
 * machines: the users' process (the driver) then is not also the model's, and its lateness in
 * taking a model request or writing a reply no longer counts as Steward's added time.
 *
 * The child serves the model (llm-server.ts) and sends what it sees over IPC; the driver keeps
 * the same record from those messages, its times moved onto the driver's clock, so the rest of
 * the bench reads it as it reads the model server in its own process.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LlmRecord, llmServer, serveLlm, type LlmOptions, type LlmServer } from './llm-server.js';
import { monotonicOffsetMs } from './numbers.js';

type RecordMessage =
  | { type: 'requestOpened' | 'requestClosed' }
  | { type: 'arrived'; session: number; at: number; messages: string; caller: string }
  | { type: 'refused'; session: number; at: number }
  | { type: 'left'; session: number; caller: string }
  | { type: 'served'; session: number; start: number; end: number; throttledMs: number };
type ChildMessage = { type: 'ready'; baseURL: string; monotonicOffsetMs: number } | RecordMessage;
type ParentMessage = { type: 'setLatency'; minMs: number; maxMs: number; tokensPerSecond?: number } | { type: 'close' };

const SCRIPT = fileURLToPath(import.meta.url);

/** Starts the model server in a child process; resolves once it listens. */
export async function startLlmProcess(options: LlmOptions): Promise<LlmServer> {
  const child = fork(SCRIPT, ['--child'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, LOAD_LLM_OPTIONS: JSON.stringify(options) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const record = new LlmRecord();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let shift = 0;
  const ready = new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the load bench's model server exited (${code}) before it listened`)));
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        // Its clock onto ours: both count from their own process's start on one monotonic clock.
        shift = message.monotonicOffsetMs - monotonicOffsetMs;
        resolve(message.baseURL);
      } else apply(record, message, shift);
    });
  });
  const baseURL = await ready;
  const send = (message: ParentMessage) => child.send(message);
  return llmServer(baseURL, record, {
    setLatency: (minMs, maxMs, tokensPerSecond) => send({ type: 'setLatency', minMs, maxMs, ...(tokensPerSecond !== undefined ? { tokensPerSecond } : {}) }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) send({ type: 'close' });
      await exited;
    },
  });
}

function apply(record: LlmRecord, message: RecordMessage, shift: number): void {
  switch (message.type) {
    case 'requestOpened':
      return record.requestOpened();
    case 'requestClosed':
      return record.requestClosed();
    case 'arrived':
      return record.arrived(message.session, { at: message.at + shift, messages: message.messages, throttled: false, caller: message.caller });
    case 'refused':
      return record.refused(message.session, message.at + shift);
    case 'left':
      return record.left(message.session, message.caller);
    case 'served':
      return record.served({ session: message.session, start: message.start + shift, end: message.end + shift, throttledMs: message.throttledMs });
  }
}

async function child(): Promise<void> {
  const tell = (message: ChildMessage) => process.send?.(message);
  const options = JSON.parse(process.env.LOAD_LLM_OPTIONS ?? '{}') as LlmOptions;
  const control = await serveLlm(options, {
    requestOpened: () => tell({ type: 'requestOpened' }),
    requestClosed: () => tell({ type: 'requestClosed' }),
    arrived: (session, arrival) => tell({ type: 'arrived', session, at: arrival.at, messages: arrival.messages, caller: arrival.caller }),
    refused: (session, at) => tell({ type: 'refused', session, at }),
    left: (session, caller) => tell({ type: 'left', session, caller }),
    served: (call) => tell({ type: 'served', ...call }),
  });
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'setLatency') control.setLatency(message.minMs, message.maxMs, message.tokensPerSecond);
    else void control.close().then(() => process.exit(0));
  });
  // The driver gone (killed, crashed): no model server left behind.
  process.on('disconnect', () => process.exit(0));
  tell({ type: 'ready', baseURL: control.baseURL, monotonicOffsetMs });
}

if (process.argv.includes('--child')) {
  void child().catch((error: unknown) => {
    process.stderr.write(`load model server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
