/**
 * An app may swap a reply guard with `provide()`. A turn's onDone edge only accepts the
 * reply; `checking` settles its calls, and the guards that decide where it leads run in
 * `routing`, on the context with the settled reply in it, so a swapped guard reads `context`
 * as the built-in one does.
 */
import { describe, expect, it } from 'vitest';
import { fromPromise, initialTransition, transition } from 'xstate';
import { sessionMachine } from '../../src/machine.js';
import type { SessionContext, TurnOutput } from '../../src/core/machines/session.context.js';
import { packageInfo } from '../../src/runtime/runtime.js';
import { loadPackages } from '../../src/skills/index.js';

const never = fromPromise<TurnOutput, SessionContext>(() => new Promise<TurnOutput>(() => {}));
const tiny = packageInfo(loadPackages().get('tiny')!);
const finishReply = {
  type: 'xstate.done.actor.managerTurn',
  output: {
    content: null,
    toolCalls: [{ id: 'call_1', type: 'function' as const, function: { name: 'finish', arguments: JSON.stringify({ summary: 'Done.' }) } }],
  },
} as const;

function afterFinishReply(machine: typeof sessionMachine) {
  const [start] = initialTransition(machine, { sessionId: 'provided', package: tiny, maxBurst: 4 });
  const [thinking] = transition(machine, start, { type: 'user_submitted_input', text: 'Otters.', at: '2026-12-01T00:00:00.000Z' });
  return transition(machine, thinking, finishReply as never)[0];
}

describe('a reply guard swapped with provide()', () => {
  it('is used, and reads the reply in the context as the built-in guard does', () => {
    const seen: string[][] = [];
    const machine = sessionMachine.provide({
      actors: { managerTurn: never, workerTurn: never },
      guards: {
        choseFinish: ({ context }) => {
          seen.push([context.reply.boundary?.tool ?? 'none', ...context.reply.queue.map((q) => q.call.function.name)]);
          return context.reply.boundary?.tool === 'finish';
        },
      },
    });
    const builtIn = afterFinishReply(sessionMachine.provide({ actors: { managerTurn: never, workerTurn: never } }));
    const swapped = afterFinishReply(machine);
    expect(builtIn.value).toBe('done');
    expect(swapped.value).toBe(builtIn.value);
    expect(seen).toEqual([['finish']]);
  });

  it('decides: a swapped guard that never chooses finish leads the reply elsewhere', () => {
    const machine = sessionMachine.provide({
      actors: { managerTurn: never, workerTurn: never },
      guards: { choseFinish: () => false },
    });
    expect(afterFinishReply(machine).value).not.toBe('done');
  });
});
