/**
 * A strict scripted model for tests: built from steps, records every call, throws on an
 * unexpected extra call (it never cycles silently), and `assertComplete()` fails when a
 * scripted step was never used.
 *
 * @example
 * const model = new ScriptedModel([
 *   { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
 *   { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'hi' } })] },
 * ]);
 */
import { ScriptMismatchError } from '../core/errors.js';
import type { Model, ModelReply, ModelRequest, ToolCall } from '../core/models/model.js';
import { playReply } from './play-reply.js';

/**
 * One tool call of a scripted step, as `scriptedCall()` builds it. It is NOT a `ToolCall`
 * (what a model reply carries): `ScriptedModel` turns it into one. The `function` and `type`
 * fields are declared `never` so that putting it where a `ToolCall` belongs (an actor's
 * output, a `ModelReply`) does not compile.
 */
export interface ScriptedToolCall {
  readonly kind: 'scripted_call';
  name: string;
  /** An object is sent as JSON; a string is sent as it is (to test malformed JSON). */
  arguments: unknown;
  id?: string;
  type?: never;
  function?: never;
}

export interface ScriptedReply {
  /** When set, the call must come from this agent. */
  agent?: 'manager' | 'worker';
  content?: string | null;
  toolCalls?: ScriptedToolCall[];
  usage?: ModelReply['usage'];
  /**
   * When the request streams (someone watches the reply): the content and each tool call's
   * arguments are passed on in pieces of this many characters. Overrides the model's `streamPieceChars`.
   */
  streamPieceChars?: number;
}

export interface ScriptedModelOptions {
  /**
   * When a request streams: pieces of this many characters for the content and each tool
   * call's arguments, as a streaming model would send them (default: no streaming, the
   * listeners see only the finished reply).
   */
  streamPieceChars?: number;
}

export type ScriptStep =
  ScriptedReply | { agent?: 'manager' | 'worker'; error: Error } | ((request: ModelRequest, index: number) => ModelReply | Promise<ModelReply>);

/**
 * A tool call for a ScriptedModel step: `{ toolCalls: [scriptedCall('finish', { summary: 'Done.' })] }`.
 *
 * @example
 * new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] }]);
 */
export function scriptedCall(name: string, args: unknown = {}, id?: string): ScriptedToolCall {
  const scripted: ScriptedToolCall = { kind: 'scripted_call', name, arguments: args, ...(id ? { id } : {}) };
  // Where the types are not checked (JavaScript, a cast), reading it as a ToolCall fails
  // loudly instead of the reply silently counting as one without tool calls.
  Object.defineProperty(scripted, 'function', {
    enumerable: false,
    get(): never {
      throw new ScriptMismatchError(
        `scriptedCall('${name}') is a ScriptedModel step, not a ToolCall: it was put in a model reply or an ` +
          `actor's output. Pass the steps to new ScriptedModel([...]) and let it answer, or build a ToolCall ` +
          `({ id, type: 'function', function: { name, arguments } }).`,
      );
    },
  });
  return scripted;
}

/**
 * A strict model for tests: answers each call with the next scripted step and fails loudly on a call the script did not foresee.
 *
 * @example
 * const model = new ScriptedModel([
 *   { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.' })] },
 *   { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { echo: 'Otters.' } })] },
 * ]);
 * const runtime = createRuntime({ model });
 * // … drive the session, then:
 * model.assertComplete();
 *
 * // Streamed in pieces of 8 characters to listeners that want deltas (drafts grow):
 * const streaming = new ScriptedModel([...steps], { streamPieceChars: 8 });
 */
export class ScriptedModel implements Model {
  readonly label = 'scripted model';
  readonly calls: ModelRequest[] = [];
  private readonly steps: ScriptStep[];

  private readonly streamPieceChars: number | undefined;

  constructor(steps: ScriptStep[] = [], options: ScriptedModelOptions = {}) {
    this.steps = [...steps];
    this.streamPieceChars = options.streamPieceChars;
  }

  /** Adds steps after construction (for tests that script as they go). */
  push(...steps: ScriptStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  get remaining(): number {
    return this.steps.length - this.calls.length;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const index = this.calls.length;
    this.calls.push(request);
    const step = this.steps[index];
    if (step === undefined) {
      throw new ScriptMismatchError(
        `ScriptedModel: unexpected call #${index + 1} from the ${request.agent} (the script has ` +
          `${this.steps.length} steps). Add a step for it, or find why the runtime called the model again.`,
      );
    }
    if (typeof step === 'function') return step(request, index);
    if (step.agent && step.agent !== request.agent) {
      throw new ScriptMismatchError(`ScriptedModel: step #${index + 1} expects the ${step.agent}, but the ${request.agent} called.`);
    }
    if ('error' in step) throw step.error;
    const toolCalls: ToolCall[] = (step.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${index + 1}_${i + 1}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const reply: ModelReply = { content: step.content ?? null, toolCalls, ...(step.usage ? { usage: step.usage } : {}) };
    const pieceChars = step.streamPieceChars ?? this.streamPieceChars;
    if (pieceChars !== undefined) await playReply(request, reply, { pieceChars });
    return reply;
  }

  /** Throws unless every scripted step was used. */
  assertComplete(): void {
    if (this.remaining > 0) {
      throw new ScriptMismatchError(
        `ScriptedModel: ${this.remaining} of ${this.steps.length} scripted steps were never used (next unused: #${this.calls.length + 1}).`,
      );
    }
  }
}
