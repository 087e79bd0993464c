/**
 * A package of three independent workers (each reads only the request and writes a tag of its
 * own) and a fourth that reads what the first writes: what a fan-out needs, and a call that
 * cannot join one. The model below answers each worker by the line its prompt starts with.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';

export const TRIO = ['north', 'south', 'east'] as const;
export type TrioWorker = (typeof TRIO)[number] | 'summary';

/** Writes the package `trio` under `dir` and returns `dir` (the packages folder). */
export function trioPackage(dir: string, approval?: 'always' | 'never'): string {
  const root = join(dir, 'trio');
  mkdirSync(join(root, 'workers'), { recursive: true });
  const workers = [...TRIO, 'summary'];
  writeFileSync(
    join(root, 'manifest.json'),
    JSON.stringify({ schemaVersion: 1, id: 'trio', title: 'Trio', description: 'Three notes at once, then a summary.', workers }),
  );
  for (const id of workers) {
    const reads = id === 'summary' ? '[north]' : '[request]';
    const front = [
      `id: ${id}`,
      `title: ${id}`,
      `description: Writes the ${id} note.`,
      `inputTags: ${reads}`,
      `outputTags: [${id}]`,
      ...(approval ? [`approval: ${approval}`] : []),
    ];
    writeFileSync(join(root, 'workers', `${id}.md`), `---\n${front.join('\n')}\n---\nWORKER ${id}\n`);
  }
  return dir;
}

/** The trio worker whose prompt is among `messages` (its first line), if any: the manager's have none. */
export function trioWorkerIn(messages: readonly { content?: unknown }[]): TrioWorker | undefined {
  const text = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  return /WORKER (\w+)/.exec(text)?.[1] as TrioWorker | undefined;
}

/** Which trio worker a worker request is for. */
export function workerOf(request: ModelRequest): TrioWorker {
  const worker = trioWorkerIn(request.messages);
  if (!worker) throw new Error('a worker request without a trio prompt');
  return worker;
}

export const call = (name: string, args: unknown, id: string) => ({ id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });

/**
 * A strict model for the trio: the manager's replies in order (then `finish`), each worker's
 * reply from `worker`. `started` counts the worker calls by worker.
 */
export class TrioModel implements Model {
  readonly label = 'trio test model';
  readonly started = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  constructor(
    private readonly manager: ModelReply[],
    private readonly worker: (id: TrioWorker, request: ModelRequest) => Promise<ModelReply> | ModelReply,
  ) {}

  async complete(request: ModelRequest): Promise<ModelReply> {
    if (request.agent === 'manager') {
      const next = this.manager.shift();
      return next ?? { content: null, toolCalls: [call('finish', { summary: 'Done.' }, `finish_${this.manager.length}`)] };
    }
    const id = workerOf(request);
    this.started.set(id, (this.started.get(id) ?? 0) + 1);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await this.worker(id, request);
    } finally {
      this.inFlight--;
    }
  }
}

/** A manager reply running `ids` together (one run_worker call each, named `run_<id>`). */
export const runTogether = (ids: readonly string[], requiresApproval = false): ModelReply => ({
  content: null,
  toolCalls: ids.map((id) => call('run_worker', { workerId: id, reason: `Write the ${id} note.`, requiresApproval }, `run_${id}`)),
});

/** A worker's submit of its own tag. */
export const submitOwn = (id: string): ModelReply => ({ content: null, toolCalls: [call('submit', { outputs: { [id]: `The ${id} note.` } }, `submit_${id}`)] });
