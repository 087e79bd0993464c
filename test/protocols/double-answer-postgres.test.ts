/**
 * The same decision sent twice at once — a double click, a page and its retry, two tabs — on
 * one PostgreSQL database, to one server (the second send queues behind the first) and, in
 * every other trial, to two servers (the second meets the first's lease): through AG-UI (two
 * identical resumes of one interrupt) and A2A (two answers with different message ids, each
 * naming the wait its status showed). Every trial applies the decision once, to the wait it
 * named; the journal holds no decision for a wait nobody was shown, and the loser is told it
 * repeated the winner.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '@a2a-js/sdk';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { JournalEntry } from '../../src/store/session-store.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { usePostgresServers } from '../support/postgres-serve.js';
import { agUiAgent, runError } from './ag-ui-client.js';
import { a2aClient, asTask, interruptOf, request } from './a2a-client.js';

/**
 * A manager that proposes a step needing approval every round: a rejection leads to the next
 * proposal, another approve_step wait — where a decision meant for the first one would fit.
 */
const proposer = () =>
  new ScriptedModel(
    Array.from({ length: 400 }, () => ({
      agent: 'manager' as const,
      toolCalls: [scriptedCall('run_worker', { workerId: 'brief-writer', reason: 'Write the brief.', requiresApproval: true })],
    })),
  );

const pg = usePostgres();
const server = usePostgresServers();
const TRIALS = 50;

/** The decisions the session took (the entries that left a wait), with the wait each named. */
function decisions(journal: readonly JournalEntry[]): { type: string; wait: unknown }[] {
  return journal.flatMap((entry, i) =>
    entry.kind === 'event' && i > 0 && entry.state !== journal[i - 1]!.state ? [{ type: entry.type, wait: (entry.payload as { wait?: unknown }).wait }] : [],
  );
}

describe.skipIf(postgresUnavailable !== null)('two identical decisions at once, on two PostgreSQL servers', () => {
  it(
    `AG-UI: ${TRIALS} trials of two concurrent resumes of one interrupt (one server, or two) apply one rejection, to the interrupt's wait`,
    { timeout: 300_000 },
    async () => {
      const url = await pg.createDatabase();
      const [a, b] = [await server(url, proposer()), await server(url, proposer())];
      const store = new PostgresStore(url);
      try {
        for (let trial = 0; trial < TRIALS; trial++) {
          const thread = `double-ag-ui-${trial}`;
          const first = agUiAgent(`${a.handle.url}/ag-ui/short-story`, thread);
          first.agent.addMessage({ id: 'u1', role: 'user', content: 'A story about a lighthouse keeper.' });
          expect(runError(await first.run())).toBeUndefined();
          const interrupt = first.interrupt!;
          expect(interrupt).toMatchObject({ reason: 'tool_call' });
          const wait = Number(interrupt.id.split('#w')[1]);
          const second = agUiAgent(`${(trial % 2 === 0 ? b : a).handle.url}/ag-ui/short-story`, thread);
          await second.run();
          expect(second.interrupt).toEqual(interrupt);

          const runs = await Promise.all([first, second].map((tab) => tab.resume(interrupt, { approved: false, reason: 'Not this one.' })));
          for (const run of runs) expect(runError(run), JSON.stringify(runError(run))).toBeUndefined();
          // Both runs end on the same next interrupt: the one the single rejection led to.
          expect(first.interrupt?.id).toBe(second.interrupt?.id);
          expect(first.interrupt?.id).not.toBe(interrupt.id);

          const taken = decisions(await store.journal(thread));
          const rejections = taken.filter((d) => d.type === 'user_rejected_next_step');
          expect(rejections, `trial ${trial}`).toEqual([{ type: 'user_rejected_next_step', wait }]);
        }
      } finally {
        await store.close();
      }
    },
  );

  it(
    `A2A: ${TRIALS} trials of two concurrent answers (different message ids) naming one wait (one server, or two) apply one rejection`,
    { timeout: 300_000 },
    async () => {
      const url = await pg.createDatabase();
      const [a, b] = [await server(url, proposer()), await server(url, proposer())];
      const clients = [await a2aClient(a.handle.url, 'short-story'), await a2aClient(b.handle.url, 'short-story')];
      const store = new PostgresStore(url);
      try {
        for (let trial = 0; trial < TRIALS; trial++) {
          const task = asTask(await clients[0]!.sendMessage(request({ text: 'A story about a lighthouse keeper.' })));
          const interrupt = interruptOf(task)!;
          expect(interrupt).toMatchObject({ reason: 'tool_call' });
          const wait = Number(interrupt.id.split('#w')[1]);
          const answers = await Promise.allSettled(
            [clients[0]!, clients[trial % 2 === 0 ? 1 : 0]!].map((client) =>
              client.sendMessage(
                request({ data: { approved: false, reason: 'Not this one.' } }, { taskId: task.id }, { steward: { interruptId: interrupt.id } }),
              ),
            ),
          );
          for (const answer of answers) expect(answer.status, answer.status === 'rejected' ? String(answer.reason) : '').toBe('fulfilled');
          const [x, y] = answers.map((answer) => interruptOf((answer as PromiseFulfilledResult<Task>).value)?.id);
          expect(x).toBe(y);
          expect(x).not.toBe(interrupt.id);

          const taken = decisions(await store.journal(task.id));
          expect(
            taken.filter((d) => d.type === 'user_rejected_next_step'),
            `trial ${trial}`,
          ).toEqual([{ type: 'user_rejected_next_step', wait }]);
        }
      } finally {
        await store.close();
      }
    },
  );
});
