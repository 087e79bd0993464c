/**
 * The A2A endpoint on PostgreSQL, with `@a2a-js/sdk`'s client: a short-story task (DemoModel)
 * waits for input, is answered over SendStreamingMessage and SendMessage, survives a server
 * restart in the middle (GetTask and SubscribeToTask on the new server read the store), and
 * reaches completed with its artifacts; a bad answer is refused and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '@a2a-js/sdk';
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { usePostgresServers } from '../support/postgres-serve.js';
import { a2aClient, asTask, collect, interruptOf, kinds, request, stateName } from './a2a-client.js';

const pg = usePostgres();
const server = usePostgresServers();

const answerFor = (task: Task) => (interruptOf(task)?.reason === 'tool_call' ? { approved: true } : { accepted: true });

describe.skipIf(postgresUnavailable !== null)('A2A on PostgreSQL', () => {
  it('a task waits, survives a restart and completes with its artifacts', async () => {
    const url = await pg.createDatabase();
    const first = await server(url);
    const client = await a2aClient(first.handle.url, 'short-story');
    let task = asTask(await client.sendMessage(request({ text: 'A story about a lighthouse keeper.' })));
    const id = task.id;
    expect(task.contextId).toBe(id);
    expect(stateName(task.status?.state)).toBe('input-required');
    expect(interruptOf(task)).toMatchObject({ reason: 'tool_call' });

    await expect(client.sendMessage(request({ data: { accepted: true } }, { taskId: id }))).rejects.toThrow(/responseSchema/);
    expect(interruptOf(await client.getTask({ tenant: '', id }))).toEqual(interruptOf(task));

    const streamed = await collect(client.sendMessageStream(request({ data: { approved: true } }, { taskId: id })));
    expect(kinds(streamed)[0]).toBe('task');
    expect(kinds(streamed).at(-1)).toBe('status:input-required');
    task = await client.getTask({ tenant: '', id });
    expect(interruptOf(task)).toMatchObject({ reason: 'steward:artifact_review' });

    // Restart: another server on the same database knows the task and its open wait.
    await first.stop();
    const second = await server(url);
    const again = await a2aClient(second.handle.url, 'short-story');
    expect(interruptOf(await again.getTask({ tenant: '', id }))).toEqual(interruptOf(task));
    expect(kinds(await collect(again.resubscribeTask({ tenant: '', id })))).toEqual(['task']);

    for (let i = 0; i < 20 && stateName(task.status?.state) === 'input-required'; i++) {
      const events = await collect(again.sendMessageStream(request({ data: answerFor(task) }, { taskId: id })));
      expect(kinds(events).at(-1)).toMatch(/^status:(input-required|completed)$/);
      task = await again.getTask({ tenant: '', id });
    }
    expect(stateName(task.status?.state)).toBe('completed');
    expect(task.artifacts.length).toBeGreaterThan(0);
    for (const artifact of task.artifacts) expect(artifact.parts.every((p) => p.content?.$case === 'text' && p.content.value.length > 0)).toBe(true);
  });

  it('SubscribeToTask on another server follows a task this one runs (NOTIFY), to its next wait', async () => {
    const url = await pg.createDatabase();
    // The demo model, held at one call until the test lets it go: the task stays working meanwhile.
    const demo = new DemoModel();
    let hold: { reached: () => void; go: Promise<void> } | null = null;
    const held: Model = {
      label: demo.label,
      async complete(request: ModelRequest): Promise<ModelReply> {
        const h = hold;
        hold = null;
        if (h) {
          h.reached();
          await h.go;
        }
        return demo.complete(request);
      },
    };
    const a = await server(url, held);
    const b = await server(url);
    const client = await a2aClient(a.handle.url, 'short-story');
    const task = asTask(await client.sendMessage(request({ text: 'A story about a lighthouse keeper.' })));
    expect(interruptOf(task)).toMatchObject({ reason: 'tool_call' });

    let reached!: () => void;
    let go!: () => void;
    const atModel = new Promise<void>((resolve) => (reached = resolve));
    hold = { reached, go: new Promise<void>((resolve) => (go = resolve)) };
    const answering = collect(client.sendMessageStream(request({ data: { approved: true } }, { taskId: task.id })));
    await atModel;
    // The model call can start before the running state's write commits: B reads the store.
    const phaseOnB = async () => ((await (await fetch(`${b.handle.url}/sessions/${task.id}`)).json()) as { view: { phase: string } }).view.phase;
    await expect.poll(phaseOnB, { timeout: 5_000 }).toBe('running');

    const following = (await a2aClient(b.handle.url, 'short-story')).resubscribeTask({ tenant: '', id: task.id });
    const first = await following.next();
    expect(kinds([first.value!])).toEqual(['task']);
    expect(stateName((first.value!.payload!.value as Task).status?.state)).toBe('working');
    go();
    const rest = await collect({ [Symbol.asyncIterator]: () => following });
    expect(kinds(rest).at(-1)).toBe('status:input-required');
    const last = rest.at(-1)!.payload!.value as { status: Task['status'] };
    expect(interruptOf({ status: last.status } as Task)).toMatchObject({ reason: 'steward:artifact_review' });
    expect(kinds(await answering).at(-1)).toBe('status:input-required');
  });
});
