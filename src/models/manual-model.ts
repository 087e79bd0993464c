/**
 * A model played by a person: `complete()` waits until someone supplies the reply — in the
 * inspector page (tool picker + JSON arguments) or in code. Requests wait in a queue; an
 * event emitter says when one arrives or is settled. A request whose session is stopped
 * (its AbortSignal fires) leaves the queue.
 *
 * @example
 * const model = new ManualModel();
 * const runtime = createRuntime({ model });
 * model.on('request', (pending) => {
 *   model.reply(pending.id, { toolCalls: [{ name: 'ask_user', arguments: { message: 'Hello!' } }] });
 * });
 */
import { EventEmitter } from 'node:events';
import { ModelError, UserError } from '../core/errors.js';
import type { Model, ModelReply, ModelRequest, ToolCall } from '../core/models/model.js';

export const MANUAL_MODEL_LABEL = 'manual model (replies typed by a person)';

export interface PendingModelRequest {
  /** "m1", "m2", … in arrival order. */
  id: string;
  agent: ModelRequest['agent'];
  request: ModelRequest;
  /** ISO-8601 time the request arrived. */
  at: string;
}

/** A reply as a person writes it: arguments as an object or as raw JSON text (sent as it is). */
export interface ManualReply {
  content?: string | null;
  toolCalls?: { name: string; arguments?: unknown; id?: string }[];
  usage?: ModelReply['usage'];
}

interface Waiting extends PendingModelRequest {
  resolve(reply: ModelReply): void;
  reject(error: Error): void;
  cleanup(): void;
}

export interface ManualModelEvents {
  request: [PendingModelRequest];
  settled: [{ id: string; outcome: 'replied' | 'failed' | 'aborted' }];
}

/**
 * A model played by a person: each call waits until someone replies (the inspector page does, with `steward inspect --manual`).
 *
 * @example
 * const model = new ManualModel();
 * model.on('request', (pending) => model.reply(pending.id, { content: 'Hello.', toolCalls: [{ name: 'finish', arguments: { summary: 'Done.' } }] }));
 * const runtime = createRuntime({ model });
 */
export class ManualModel extends EventEmitter<ManualModelEvents> implements Model {
  readonly label = MANUAL_MODEL_LABEL;
  private readonly waiting = new Map<string, Waiting>();
  private count = 0;

  /** Requests waiting for a reply, oldest first. */
  pending(): PendingModelRequest[] {
    return [...this.waiting.values()].map(({ id, agent, request, at }) => ({ id, agent, request, at }));
  }

  complete(request: ModelRequest): Promise<ModelReply> {
    const id = `m${++this.count}`;
    return new Promise<ModelReply>((resolve, reject) => {
      const onAbort = () => {
        if (!this.waiting.delete(id)) return;
        reject(new ModelError(`The ${request.agent}'s request ${id} was abandoned: its session stopped.`));
        this.emit('settled', { id, outcome: 'aborted' });
      };
      if (request.signal?.aborted) {
        reject(new ModelError(`The ${request.agent}'s request was abandoned before it was shown: its session stopped.`));
        return;
      }
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const waiting: Waiting = {
        id,
        agent: request.agent,
        request,
        at: new Date().toISOString(),
        resolve,
        reject,
        cleanup: () => request.signal?.removeEventListener('abort', onAbort),
      };
      this.waiting.set(id, waiting);
      this.emit('request', { id, agent: request.agent, request, at: waiting.at });
    });
  }

  /** Answers a pending request. Tool arguments given as objects are sent as JSON. */
  reply(id: string, reply: ManualReply): void {
    const waiting = this.take(id);
    const toolCalls: ToolCall[] = (reply.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `manual_${id}_${i + 1}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) },
    }));
    waiting.resolve({ content: reply.content ?? null, toolCalls, ...(reply.usage ? { usage: reply.usage } : {}) });
    this.emit('settled', { id, outcome: 'replied' });
  }

  /** Makes a pending request fail as a model failure would (the session lands in waiting_user.input). */
  fail(id: string, message = 'The person playing the model made this call fail.'): void {
    this.take(id).reject(new ModelError(message));
    this.emit('settled', { id, outcome: 'failed' });
  }

  private take(id: string): Waiting {
    const waiting = this.waiting.get(id);
    if (!waiting) {
      const open = [...this.waiting.keys()];
      throw new UserError(`No pending model request "${id}"${open.length ? `; pending: ${open.join(', ')}` : ' (none is pending)'}.`);
    }
    this.waiting.delete(id);
    waiting.cleanup();
    return waiting;
  }
}
