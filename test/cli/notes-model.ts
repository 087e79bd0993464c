/**
 * The fake OpenAI model the CLI's tool tests script (test/support/fake-openai-server.ts), the
 * replies they use with the notes package (test/tools/notes-package.ts), and what the model was
 * sent. Each file calls `useNotesModel(tmp)` once; its servers close after each test.
 */
import { afterEach } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';
import type { NotesPackage } from '../tools/notes-package.js';

type Call = { name: string; arguments: string; id: string };
export const call = (name: string, args: unknown, id: string): Call => ({ name, arguments: JSON.stringify(args), id });
export const reply = (...toolCalls: Call[]): FakeStep => ({ reply: { toolCalls } });
export const runKeeper = reply(call('run_worker', { workerId: 'keeper', reason: 'Keep the notes.', requiresApproval: false }, 'm1'));
export const submit = reply(call('submit', { outputs: { note: 'Kept.' } }, 's1'));

/**
 * Starts a fake model with `steps` for the notes package `notes`: the model, the environment a
 * `steward` process needs for both, and a database path of the test's temp folder.
 */
export function useNotesModel(tmp: { path(name: string): string }) {
  const servers: FakeOpenAI[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (steps: FakeStep[], notes: NotesPackage, db = 'steward.db') => {
    const fake = await startFakeOpenAI(steps);
    servers.push(fake);
    return {
      fake,
      env: { OPENAI_BASE_URL: fake.baseURL, STEWARD_MODEL: 'fake-model', ...notes.env },
      db: tmp.path(db),
      packages: ['--packages', notes.packagesDir],
    };
  };
}

/** The tool results the model was sent in request `n` (1-based), by call id. */
export function toolResultsOf(fake: FakeOpenAI, n: number): Record<string, string> {
  const messages = (fake.requests[n - 1] as { messages: { role: string; tool_call_id?: string; content?: string }[] } | undefined)?.messages ?? [];
  return Object.fromEntries(messages.filter((m) => m.role === 'tool' && m.tool_call_id !== undefined).map((m) => [m.tool_call_id!, String(m.content)]));
}
