/**
 * The trio package (trio-package.ts) answered over HTTP by a fake OpenAI server, for tests of
 * the real CLI and of `steward serve`: the manager's replies in order (then `finish`), and each
 * worker's submit of its own tag, told apart by the worker's prompt.
 */
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from './fake-openai-server.js';
import { TRIO, trioWorkerIn } from './trio-package.js';

/** The trio worker a request is for, or 'manager'. */
export function agentOf(body: unknown): string {
  return trioWorkerIn((body as { messages: { content?: unknown }[] }).messages) ?? 'manager';
}

const step = (name: string, args: unknown, id: string): FakeStep => ({ reply: { toolCalls: [{ name, arguments: JSON.stringify(args), id }] } });

/** The manager's reply proposing the three trio workers together (calls `run_north`, `run_south`, `run_east`). */
export const proposeTrio = (requiresApproval: boolean): FakeStep => ({
  reply: {
    toolCalls: TRIO.map((id) => ({
      name: 'run_worker',
      arguments: JSON.stringify({ workerId: id, reason: `Write the ${id} note.`, requiresApproval }),
      id: `run_${id}`,
    })),
  },
});

export interface TrioServer {
  server: FakeOpenAI;
  /** Model calls by agent (the manager, or a worker's id). */
  calls: Map<string, number>;
  /** The env a CLI process needs to use it. */
  env: Record<string, string>;
}

/**
 * A fake OpenAI server answering the trio: `manager` in order, then `finish`; each worker
 * submits "The <id> note." (`server.requests` holds what each was asked); a worker of `hang`
 * never answers (its call stays in flight until the client gives up).
 *
 * @example
 * const trio = await startTrioServer([proposeTrio(true)]);
 * runCli(['send', id, 'input', '--text', 'Notes'], { db, env: trio.env });
 */
export async function startTrioServer(manager: FakeStep[], { hang = [] }: { hang?: readonly string[] } = {}): Promise<TrioServer> {
  const calls = new Map<string, number>();
  const server = await startFakeOpenAI(async (body) => {
    const who = agentOf(body);
    calls.set(who, (calls.get(who) ?? 0) + 1);
    if (who === 'manager') return manager.shift() ?? step('finish', { summary: 'The notes are done.' }, `finish_${calls.get(who)}`);
    const submit = step('submit', { outputs: { [who]: `The ${who} note.` } }, `submit_${who}_${calls.get(who)}`);
    return hang.includes(who) ? { delayMs: 60_000, then: submit } : submit;
  });
  return { server, calls, env: { OPENAI_BASE_URL: server.baseURL, STEWARD_MODEL: 'fake-model' } };
}
