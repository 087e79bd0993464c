/**
 * The deterministic fake model of the scenario. It answers instantly and decides its next
 * step ONLY from the number of tool results (role 'tool') in the messages it is given, so a
 * runtime that lost a tool result gets the wrong script (and the transcript check fails).
 *
 * It also timestamps every call on entry (performance.now()): the time between two
 * consecutive stamps is the runtime's own work between two model calls. Sessions run one at
 * a time, so `begin()` starts a fresh recording for the next session.
 */
import type { ChatMessage, Model, ModelReply, ModelRequest } from '../src/core/models/model.js';
import { FINISH_SUMMARY, questionOf, stepFor } from './scenario.js';

const MAX_CALLS = 64;

export class FakeModel implements Model {
  readonly label = 'bench fake model';
  /** Calls since the last begin(), with their entry times. */
  calls = 0;
  readonly stamps = new Float64Array(MAX_CALLS);
  totalCalls = 0;

  begin(): void {
    this.calls = 0;
  }

  /** The stamps of the current recording, copied out. */
  takeStamps(): number[] {
    return Array.from(this.stamps.subarray(0, Math.min(this.calls, MAX_CALLS)));
  }

  complete(request: ModelRequest): Promise<ModelReply> {
    return Promise.resolve(this.reply(request.messages));
  }

  /** The synchronous core, shared with the baseline (which calls it the same way). */
  reply(messages: readonly ChatMessage[]): ModelReply {
    const now = performance.now();
    if (this.calls < MAX_CALLS) this.stamps[this.calls] = now;
    this.calls++;
    this.totalCalls++;
    let toolResults = 0;
    for (const m of messages) if (m.role === 'tool') toolResults++;
    const step = stepFor(toolResults);
    const args =
      step.tool === 'read_blackboard' ? { tags: [step.tag] } : step.tool === 'ask_user' ? { message: questionOf(step.burst) } : { summary: FINISH_SUMMARY };
    return {
      content: null,
      toolCalls: [{ id: `call_${toolResults + 1}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(args) } }],
    };
  }
}
