/**
 * The A2A endpoint of `steward serve`, driven by `@a2a-js/sdk`'s own client (JSON-RPC, A2A
 * 1.0) on SQLite with a named token: a `tiny` session from the first request to completed
 * through every kind of wait it has (a text question, an approval with edits, two artifact
 * reviews), over SendMessage and SendStreamingMessage; SubscribeToTask follows a task that
 * runs; bad answers are JSON-RPC errors that change nothing; GetTask after a restart reads
 * the store; CancelTask is refused as the spec's "not cancelable"; 0.3 method names work.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamResponse, Task } from '@a2a-js/sdk';
import type { ModelReply } from '../../src/core/models/model.js';
import { ScriptedModel, scriptedCall } from '../../src/models/scripted-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { useTempDir } from '../support/temp.js';
import { a2aClient, asTask, collect, interruptOf, kinds, request, stateName } from './a2a-client.js';

const tmp = useTempDir('steward-a2a-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const TOKEN = 'token-of-ana-0123456789';

async function serve(file: string, model: ScriptedModel): Promise<{ server: ServeHandle; store: SqliteStore; close: () => Promise<void> }> {
  const store = new SqliteStore(file);
  const runtime = createRuntime({ model, store });
  const server = await startServe({ runtime, store, port: 0, tokens: [{ name: 'ana', token: TOKEN, actForOthers: false }], log: () => {} });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    store.close();
  };
  open.push(close);
  return { server, store, close };
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

const texts = (task: Task) => task.artifacts.map((a) => a.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')));

describe('A2A endpoint (SQLite)', () => {
  it('runs a tiny session from request to completed through every wait, streamed and not', async () => {
    const managerRuns = gate();
    const reachedGate = gate();
    const model = new ScriptedModel([
      /* 0 */ { agent: 'manager', content: 'Should the note be short?' },
      /* 1 */ { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval: true }, 'call_echo')] },
      /* 2 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A keeper keeps a light.' } })] },
      /* 3 */ async (): Promise<ModelReply> => {
        reachedGate.open();
        await managerRuns.wait;
        return {
          content: null,
          toolCalls: [
            {
              id: 'call_sum',
              type: 'function',
              function: { name: 'run_worker', arguments: JSON.stringify({ workerId: 'summarize', reason: 'One line.', requiresApproval: false }) },
            },
          ],
        };
      },
      /* 4 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { summary: 'A light is kept.' } })] },
      /* 5 */ { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Note and summary are accepted.' })] },
    ]);
    const file = tmp.path('a2a.db');
    const { server, store, close } = await serve(file, model);

    // The card: one skill per worker, streaming, bearer auth; public, as discovery documents are (every other route needs the token).
    expect((await fetch(`${server.url}/a2a/tiny/.well-known/agent-card.json`)).status).toBe(200);
    expect((await fetch(`${server.url}/a2a/tiny`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    const client = await a2aClient(server.url, 'tiny', TOKEN);
    const card = await client.getAgentCard();
    expect(card.skills.map((s) => s.id)).toEqual(['echo', 'summarize']);
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.version).toBe(createRuntime({ model, store }).packageVersionOnDisk('tiny'));
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${server.url}/a2a/tiny`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });

    // A first message without text is refused before any session exists.
    await expect(client.sendMessage(request({ data: { approved: true } }, { contextId: 'ctx-1' }))).rejects.toThrow(/first message is the request/);
    expect(await store.load('ctx-1')).toBeUndefined();

    // The first request starts the session: contextId = task id = session id. The manager asks (text wait).
    let task = asTask(await client.sendMessage(request({ text: 'A note about a lighthouse.' }, { contextId: 'ctx-1' })));
    expect(task).toMatchObject({ id: 'ctx-1', contextId: 'ctx-1' });
    expect(stateName(task.status?.state)).toBe('input-required');
    expect(interruptOf(task)).toMatchObject({ reason: 'input_required', message: 'Should the note be short?' });

    // A text part answers a text wait.
    task = asTask(await client.sendMessage(request({ text: 'Yes, short.' }, { taskId: 'ctx-1' })));
    const approval = interruptOf(task)!;
    expect(approval).toMatchObject({ reason: 'tool_call', toolCallId: 'call_echo' });
    expect(approval.responseSchema).toMatchObject({ type: 'object', required: ['approved'] });

    // Bad answers: JSON-RPC errors with a clear message; nothing changes (same wait, same interrupt id).
    await expect(client.sendMessage(request({ text: 'sure' }, { taskId: 'ctx-1' }))).rejects.toThrow(
      /waits \(approve_step\) for more than text.*responseSchema/,
    );
    await expect(client.sendMessage(request({ data: { approved: 'yes' } }, { taskId: 'ctx-1' }))).rejects.toThrow(/approved: .*Nothing was sent/);
    await expect(client.sendMessage(request({ data: { approved: true, by: 'mallory' } }, { taskId: 'ctx-1' }))).rejects.toThrow(/Unrecognized key.*by/);
    await expect(client.sendMessage(request({ text: 'x' }, { taskId: 'no-such-task' }))).rejects.toThrow(/No task no-such-task/);
    expect(interruptOf(await client.getTask({ tenant: '', id: 'ctx-1' }))).toEqual(approval);

    // Approve with edits, streamed: the task (working), a working note per round, then the review wait.
    let events: StreamResponse[] = await collect(
      client.sendMessageStream(request({ data: { approved: true, reason: 'Restate it in one line.' } }, { taskId: 'ctx-1' })),
    );
    expect(kinds(events)).toEqual(['task', 'status:working', 'status:input-required']);
    const review = events.at(-1)!.payload!.value as { status: Task['status'] };
    expect(review.status?.message?.parts.map((p) => p.content?.$case)).toEqual(['text', 'text', 'data']);
    expect(review.status?.message?.parts[1]).toMatchObject({ content: { value: 'A keeper keeps a light.' }, metadata: { tag: 'note' } });

    // Accept with edits, streamed; the manager's next round waits at the gate: the task works, and SubscribeToTask follows it.
    const accepting = collect(
      client.sendMessageStream(request({ data: { accepted: true, edits: { note: 'A keeper keeps the light.' } } }, { taskId: 'ctx-1' })),
    );
    await reachedGate.wait;
    const watcher = await a2aClient(server.url, 'tiny', TOKEN);
    const following = watcher.resubscribeTask({ tenant: '', id: 'ctx-1' });
    const firstFollowed = await following.next();
    expect(firstFollowed.value?.payload).toMatchObject({ $case: 'task', value: { id: 'ctx-1' } });
    expect(stateName((firstFollowed.value!.payload!.value as Task).status?.state)).toBe('working');
    managerRuns.open();
    const followed = [firstFollowed.value!, ...(await collect({ [Symbol.asyncIterator]: () => following }))];
    expect(kinds(followed)).toEqual(['task', 'status:working', 'status:input-required']);
    events = await accepting;
    expect(kinds(events)).toEqual(['task', 'status:working', 'status:working', 'artifactUpdate', 'status:input-required']);
    expect(events[3]!.payload!.value).toMatchObject({ taskId: 'ctx-1', append: false, lastChunk: true });

    // Resubscribing to a waiting task: the task, and the end (nothing runs until it is answered).
    expect(kinds(await collect(watcher.resubscribeTask({ tenant: '', id: 'ctx-1' })))).toEqual(['task']);

    // CancelTask: refused as the spec's TaskNotCancelableError, nothing changed.
    await expect(client.cancelTask({ tenant: '', id: 'ctx-1', metadata: undefined })).rejects.toThrow(/cannot be canceled/);

    // The last review, blocking: completed, with one A2A artifact per accepted artifact (parts = tag bodies, the edits kept).
    task = asTask(await client.sendMessage(request({ data: { accepted: true } }, { taskId: 'ctx-1' })));
    expect(stateName(task.status?.state)).toBe('completed');
    expect(texts(task)).toEqual([['A keeper keeps the light.'], ['A light is kept.']]);
    await expect(client.sendMessage(request({ text: 'More?' }, { taskId: 'ctx-1' }))).rejects.toThrow(/is completed/);
    await expect(collect(watcher.resubscribeTask({ tenant: '', id: 'ctx-1' }))).rejects.toThrow(/is completed/);

    // Who acted is the token's caller, never the payload; through A2A.
    const journal = await store.journal('ctx-1');
    const users = journal.filter((e) => e.kind === 'event' && String((e.payload as { type?: string }).type).startsWith('user_'));
    expect(users.length).toBeGreaterThanOrEqual(5);
    for (const entry of users) expect(entry.payload).toMatchObject({ by: 'ana', through: 'a2a' });

    // After a restart, GetTask reads the task from the store.
    await close();
    const again = await serve(file, new ScriptedModel([]));
    const after = await (await a2aClient(again.server.url, 'tiny', TOKEN)).getTask({ tenant: '', id: 'ctx-1' });
    expect(stateName(after.status?.state)).toBe('completed');
    expect(texts(after)).toEqual(texts(task));

    // The 0.3 method names (no A2A-Version header) reach the same handler through the SDK's compat layer.
    const legacy = await fetch(`${again.server.url}/a2a/tiny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'ctx-1' } }),
    });
    expect(await legacy.json()).toMatchObject({ id: 1, result: { kind: 'task', id: 'ctx-1', status: { state: 'completed' } } });
  });

  it('speaks the 0.3 method names too: message/send, message/stream (SSE), tasks/resubscribe', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', content: 'Should the note be short?' },
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval: true }, 'call_echo')] },
    ]);
    const { server } = await serve(tmp.path('a2a-legacy.db'), model);
    // No A2A-Version header: a 0.3 client.
    const rpc = (method: string, params: unknown) =>
      fetch(`${server.url}/a2a/tiny`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params }),
      });
    const sse = async (response: Response) =>
      (await response.text())
        .split('\n\n')
        .filter((block) => block.startsWith('data: '))
        .map((block) => JSON.parse(block.slice('data: '.length)) as { result: { kind: string; status?: { state: string } } });
    const message = (parts: unknown[], ids: Record<string, string>) => ({
      message: { kind: 'message', messageId: `l-${JSON.stringify(parts)}`, role: 'user', parts, ...ids },
    });

    const sent = (await (await rpc('message/send', message([{ kind: 'text', text: 'A note.' }], { contextId: 'legacy-1' }))).json()) as { result: unknown };
    expect(sent.result).toMatchObject({ kind: 'task', id: 'legacy-1', contextId: 'legacy-1', status: { state: 'input-required' } });

    const bad = await rpc('message/stream', message([{ kind: 'data', data: { approved: 'yes' } }], { taskId: 'legacy-1' }));
    expect(bad.headers.get('content-type')).toMatch(/application\/json/);
    expect(await bad.json()).toMatchObject({ error: { code: -32602, message: expect.stringContaining('Nothing was sent') } });

    const streamed = await rpc('message/stream', message([{ kind: 'text', text: 'Yes.' }], { taskId: 'legacy-1' }));
    expect(streamed.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = await sse(streamed);
    expect(events[0]!.result).toMatchObject({ kind: 'task', status: { state: 'working' } });
    expect(events.at(-1)!.result).toMatchObject({ kind: 'status-update', status: { state: 'input-required' } });

    const followed = await sse(await rpc('tasks/resubscribe', { id: 'legacy-1' }));
    expect(followed.map((e) => e.result.kind)).toEqual(['task']);
    expect((await (await rpc('tasks/cancel', { id: 'legacy-1' })).json()) as unknown).toMatchObject({ error: { code: -32002 } });
  });

  it('a server that shuts down ends the SubscribeToTask streams of a task it runs', async () => {
    const managerRuns = gate();
    const reachedGate = gate();
    const model = new ScriptedModel([
      async (): Promise<ModelReply> => {
        reachedGate.open();
        await managerRuns.wait;
        return { content: 'Too late.', toolCalls: [] };
      },
    ]);
    const store = new SqliteStore(tmp.path('a2a-shutdown.db'));
    const server = await startServe({ runtime: createRuntime({ model, store }), store, port: 0, graceMs: 50, log: () => {} });
    open.push(async () => {
      managerRuns.open();
      await server.close();
      store.close();
    });
    const client = await a2aClient(server.url, 'tiny');
    const sending = client.sendMessage(request({ text: 'A note.' }, { contextId: 'ctx-stop' })).catch((error: unknown) => error);
    await reachedGate.wait;
    const following = client.resubscribeTask({ tenant: '', id: 'ctx-stop' });
    expect(kinds([(await following.next()).value!])).toEqual(['task']);
    const rest = collect({ [Symbol.asyncIterator]: () => following });
    await server.close();
    // Ended by the shutdown, not by the task (it is still working, saved, for another server to take over).
    expect(kinds(await rest)).toEqual([]);
    await sending;
  });

  it('counts a message sent twice (a retry: the same messageId) once', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', content: 'Should the note be short?' },
      { agent: 'manager', content: 'Which tone?' },
    ]);
    const { server, store } = await serve(tmp.path('a2a-retry.db'), model);
    const client = await a2aClient(server.url, 'tiny', TOKEN);
    await client.sendMessage(request({ text: 'A note.' }, { contextId: 'ctx-retry' }));
    const answer = request({ text: 'Yes, short.' }, { taskId: 'ctx-retry' });
    const first = asTask(await client.sendMessage(answer));
    expect(interruptOf(first)).toMatchObject({ message: 'Which tone?' });
    // The same message again: the task as it is, not an answer to the new question.
    const again = asTask(await client.sendMessage(answer));
    expect(interruptOf(again)).toEqual(interruptOf(first));
    const inputs = (await store.journal('ctx-retry')).filter((e) => (e.payload as { type?: string }).type === 'user_submitted_input');
    expect(inputs.map((e) => (e.payload as { text: string }).text)).toEqual(['A note.', 'Yes, short.']);
  });
});
