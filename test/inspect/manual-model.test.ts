import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { ManualModel, type PendingModelRequest } from '../../src/models/manual-model.js';

const nextRequest = (model: ManualModel) => new Promise<PendingModelRequest>((resolve) => model.once('request', resolve));

describe('ManualModel: a person plays the model', () => {
  it('a model call waits in the queue until someone replies, then the session goes on', async () => {
    const model = new ManualModel();
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const asked = nextRequest(model);
    const sending = session.send({ type: 'user_submitted_input', text: 'A haiku about tea' });

    const first = await asked;
    expect(first).toMatchObject({ id: 'm1', agent: 'manager' });
    expect(model.pending().map((p) => p.id)).toEqual(['m1']);
    expect(first.request.tools.map((t) => t.name)).toContain('run_worker');
    expect(session.view().state).toBe('running.manager.thinking');

    const second = nextRequest(model);
    model.reply('m1', { toolCalls: [{ name: 'read_blackboard', arguments: { tags: ['request'] } }] });
    expect((await second).id).toBe('m2'); // a loop tool: the manager is asked again
    model.reply('m2', {
      content: 'Proposing a step.',
      toolCalls: [{ name: 'run_worker', arguments: { workerId: 'echo', reason: 'write it', requiresApproval: true } }],
    });

    const result = await sending;
    expect(result.ok).toBe(true);
    expect(result.view.waitingReason).toBe('approve_step');
    expect(result.view.pendingStep).toMatchObject({ workerId: 'echo', reason: 'write it' });
    expect(model.pending()).toEqual([]);
  });

  it('raw JSON text is passed on as it is, so a person can test the validation rules', async () => {
    const model = new ManualModel();
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const asked = nextRequest(model);
    void session.send({ type: 'user_submitted_input', text: 'x' });
    const { id } = await asked;
    const again = nextRequest(model);
    model.reply(id, { toolCalls: [{ name: 'run_worker', arguments: '{"workerId": ' }] });
    const retry = await again;
    const toolMessage = retry.request.messages.findLast((m) => m.role === 'tool');
    expect(toolMessage?.content).toMatch(/JSON|argument/i);
    session.stop();
  });

  it('fail() makes the call fail like a network error; an unknown id names the pending ones', async () => {
    const model = new ManualModel();
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const asked = nextRequest(model);
    const sending = session.send({ type: 'user_submitted_input', text: 'x' });
    const { id } = await asked;
    expect(() => model.reply('m99', {})).toThrow(/No pending model request "m99"; pending: m1/);
    model.fail(id, 'Simulated outage.');
    const result = await sending;
    expect(result.view.waitingReason).toBe('input');
    expect(result.view.notice).toContain('Simulated outage.');
  });

  it('a request whose session stops leaves the queue', async () => {
    const model = new ManualModel();
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const asked = nextRequest(model);
    void session.send({ type: 'user_submitted_input', text: 'x' });
    await asked;
    const settled = new Promise((resolve) => model.once('settled', resolve));
    session.stop();
    expect(await settled).toEqual({ id: 'm1', outcome: 'aborted' });
    expect(model.pending()).toEqual([]);
  });
});
