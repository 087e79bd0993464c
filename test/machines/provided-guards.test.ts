/**
 * An app may swap a reply guard with `provide()`. On a turn's onDone edges the guards run
 * before the edge accepts the reply (XState evaluates guards before actions), so a swapped
 * guard reads the reply through `replyGuardContext` — the exported helper the machine's own
 * guards use — and then decides exactly as the built-in one.
 */
import { describe, expect, it } from 'vitest';
import { fromPromise, initialTransition, transition } from 'xstate';
import { replyGuardContext, sessionMachine } from '../../src/machine.js';
import type { SessionContext, TurnOutput } from '../../src/machines/session.context.js';
import { packageInfo } from '../../src/runtime/runtime.js';
import { loadPackages } from '../../src/skills/index.js';

const never = fromPromise<TurnOutput, SessionContext>(() => new Promise<TurnOutput>(() => {}));
const tiny = packageInfo(loadPackages().get('tiny')!);
const finishReply = { type: 'xstate.done.actor.managerTurn', output: { content: null, toolCalls: [{ id: 'call_1', type: 'function' as const, function: { name: 'finish', arguments: JSON.stringify({ summary: 'Done.' }) } }] } } as const;

function afterFinishReply(machine: typeof sessionMachine) {
  const [start] = initialTransition(machine, { sessionId: 'provided', package: tiny, maxBurst: 4 });
  const [thinking] = transition(machine, start, { type: 'user_submitted_input', text: 'Otters.', at: '2026-12-01T00:00:00.000Z' });
  return transition(machine, thinking, finishReply as never)[0];
}

describe('a reply guard swapped with provide()', () => {
  it('reads the arrived reply through replyGuardContext and decides as the built-in guard', () => {
    const seen: string[][] = [];
    const machine = sessionMachine.provide({
      actors: { managerTurn: never, workerTurn: never },
      guards: {
        choseFinish: ({ context, event }, params) => {
          const { reply } = replyGuardContext(context, event, params as { reply?: 'arrived' });
          seen.push(reply.queue.map((q) => q.call.function.name));
          return reply.queue.at(-1)?.call.function.name === 'finish';
        },
      },
    });
    const builtIn = afterFinishReply(sessionMachine.provide({ actors: { managerTurn: never, workerTurn: never } }));
    const swapped = afterFinishReply(machine);
    expect(builtIn.value).toBe('done');
    expect(swapped.value).toBe(builtIn.value);
    expect(seen).toContainEqual(['finish']);
  });

  it('without replyGuardContext a guard on the onDone edge reads the context before the reply (the pitfall the README names)', () => {
    const seen: number[] = [];
    const machine = sessionMachine.provide({
      actors: { managerTurn: never, workerTurn: never },
      guards: { choseFinish: ({ context }) => (seen.push(context.reply.queue.length), false) },
    });
    expect(afterFinishReply(machine).value).not.toBe('done');
    expect(seen[0]).toBe(0);
  });
});
