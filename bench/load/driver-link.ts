/**
 * A load server's side of its conversation with the driver (server-process.ts and
 * floor-process.ts): it says it is ready, answers each request for figures with what every
 * server measures the same way (event-loop delay and utilisation, garbage-collection pauses,
 * memory, CPU, each send's time and its model share) and what only it knows, resets the window's samples when asked, and closes.
 */
import { monitorEventLoopDelay, performance, PerformanceObserver, type EventLoopUtilization } from 'node:perf_hooks';
import { OpenAIModel } from '../../src/models/openai-model.js';
import type { DriverMessage, ServerMessage, ServerStats } from './server-process.js';

/** The model client of every load server, Steward's and the floor's alike: the same settings on both sides of the comparison. */
export function loadModel(baseURL: string): OpenAIModel {
  return new OpenAIModel({ model: 'load-bench', baseURL, apiKey: 'none', maxRetries: 4 });
}

/** Each send's time begun since `since` (the last reset): whole, its model calls, and the rest. */
export interface SendTimes {
  since: number;
  added: number[];
  whole: number[];
  model: number[];
}

export function sendTimes(): SendTimes {
  return { since: 0, added: [], whole: [], model: [] };
}

/** Records one send that began at `start` and made `modelMs` of model calls, if it began in the window. */
export function recordSend(sends: SendTimes, start: number, modelMs: number): void {
  if (start < sends.since) return;
  const whole = performance.now() - start;
  sends.added.push(Math.max(0, whole - modelMs));
  sends.whole.push(whole);
  sends.model.push(modelMs);
}

type OwnFigures = Omit<
  ServerStats,
  | 'eventLoopP50Ms'
  | 'eventLoopP99Ms'
  | 'eventLoopMaxMs'
  | 'eventLoopBusy'
  | 'gcPauses'
  | 'heapUsedBytes'
  | 'rssBytes'
  | 'cpuMs'
  | 'sendAddedMs'
  | 'sendWholeMs'
  | 'sendModelMs'
>;

/** The garbage collector's pauses, when each began and how long it took, as Node reports them ('gc' performance entries). */
function gcPauses(): Array<{ start: number; ms: number }> {
  const pauses: Array<{ start: number; ms: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ start: entry.startTime, ms: entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  return pauses;
}

/** The pauses that began at `since` or later: an entry reaches the observer a little after its pause, so one from before a reset can arrive after it. */
function pausesSince(pauses: ReadonlyArray<{ start: number; ms: number }>, since: number): ServerStats['gcPauses'] {
  const window = pauses.filter((p) => p.start >= since).map((p) => p.ms);
  return {
    count: window.length,
    ms: window.reduce((a, b) => a + b, 0),
    over10Ms: window.filter((ms) => ms > 10).length,
    maxMs: window.reduce((a, b) => Math.max(a, b), 0),
  };
}

export interface DriverLink {
  url: string;
  sends: SendTimes;
  /** What only this server knows, read at each request for figures. */
  figures: () => OwnFigures;
  /** Also to clear at a reset (the window's samples of its own). */
  onReset?: () => void;
  close: () => Promise<void>;
}

/** Tells the driver the server is ready at `url`, then answers it until it says close. */
export function answerDriver(link: DriverLink): void {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let busySince: EventLoopUtilization = performance.eventLoopUtilization();
  const pauses = gcPauses();
  const { sends } = link;
  process.on('message', (message: DriverMessage) => {
    if (message.type === 'close') {
      void link.close().then(() => {
        process.send?.({ type: 'closed' } satisfies ServerMessage);
        process.exit(0);
      });
      return;
    }
    if (message.gc) globalThis.gc?.();
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const stats: ServerStats = {
      ...link.figures(),
      eventLoopP50Ms: delay.percentile(50) / 1e6,
      eventLoopP99Ms: delay.percentile(99) / 1e6,
      eventLoopMaxMs: delay.max / 1e6,
      eventLoopBusy: performance.eventLoopUtilization(busySince).utilization,
      gcPauses: pausesSince(pauses, sends.since),
      heapUsedBytes: memory.heapUsed,
      rssBytes: memory.rss,
      cpuMs: (cpu.user + cpu.system) / 1000,
      sendAddedMs: [...sends.added],
      sendWholeMs: [...sends.whole],
      sendModelMs: [...sends.model],
    };
    if (message.reset) {
      delay.reset();
      busySince = performance.eventLoopUtilization();
      pauses.length = 0;
      sends.added.length = 0;
      sends.whole.length = 0;
      sends.model.length = 0;
      sends.since = performance.now();
      link.onReset?.();
    }
    process.send?.({ type: 'stats', stats } satisfies ServerMessage);
  });
  // The driver gone (stopped, crashed): nobody reads this server any more.
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', url: link.url, pid: process.pid } satisfies ServerMessage);
}
