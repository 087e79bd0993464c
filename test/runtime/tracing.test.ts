/**
 * Traces: a short-story session traced through @opentelemetry/api, collected with the SDK's
 * in-memory exporter. The span tree follows the GenAI conventions (invoke_workflow →
 * invoke_agent → chat / execute_tool) with one steward.decision span per user event.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createRuntime, type UserEvent } from '../../src/index.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { nextEvent } from '../serve/http.js';

function traced() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider };
}

const parentOf = (span: ReadableSpan, all: readonly ReadableSpan[]) => all.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);

describe('traces', () => {
  it('a short-story session: workflows of agents of chats and tool calls, one decision span per user event', async () => {
    const { exporter, provider } = traced();
    const runtime = createRuntime({ model: new DemoModel(), tracerProvider: provider });
    const session = await runtime.createSession({ packageId: 'short-story' });
    const sent: UserEvent[] = [];
    // One refused event first: it is a decision too, and changes nothing.
    const refused = await session.send({ type: 'user_confirmed_intake', by: 'alice' });
    expect(refused.ok).toBe(false);
    for (let i = 0; i < 40 && session.view().phase !== 'done'; i++) {
      let event = nextEvent(session.view(), 'A ghost story in a lighthouse.');
      if (event.type === 'user_approved_next_step' && sent.every((e) => e.type !== 'user_approved_next_step'))
        event = { ...event, edits: { reason: 'Keep it short.' } };
      const result = await session.send({ ...event, by: 'alice' });
      expect(result.ok, event.type).toBe(true);
      sent.push(event);
    }
    expect(session.view().phase).toBe('done');
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();

    // Every span belongs to the session's conversation.
    expect(spans.every((s) => s.attributes['gen_ai.conversation.id'] === session.id)).toBe(true);

    // One decision span per user event the session took, each the first child of its workflow.
    const decisions = spans.filter((s) => s.name.startsWith('steward.decision ') && s.name !== 'steward.decision refused');
    expect(decisions.map((d) => d.attributes['steward.decision.event'])).toEqual(sent.map((e) => e.type));
    for (const d of decisions) {
      expect(parentOf(d, spans)?.name).toBe('invoke_workflow short-story');
      expect(d.attributes['steward.decision.by']).toBe('alice');
      expect(typeof d.attributes['steward.decision.wait_ms']).toBe('number');
    }
    const approvals = decisions.filter((d) => d.attributes['steward.decision.event'] === 'user_approved_next_step');
    expect(approvals[0]!.attributes).toMatchObject({ 'steward.decision.edits': ['reason'], 'steward.approval.required_by': 'model' });
    expect(spans.filter((s) => s.name === 'steward.decision refused')).toHaveLength(1);

    // Workflows: one per decision, roots of their traces.
    const workflows = spans.filter((s) => s.name === 'invoke_workflow short-story');
    expect(workflows).toHaveLength(sent.length);
    expect(workflows.every((w) => w.parentSpanContext === undefined && w.attributes['gen_ai.operation.name'] === 'invoke_workflow')).toBe(true);

    // Agents under workflows: the manager and each worker of the chain.
    const agents = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent');
    expect(new Set(agents.map((a) => a.attributes['gen_ai.agent.name']))).toEqual(new Set(['manager', 'brief-writer', 'outliner', 'drafter', 'critic']));
    expect(agents.every((a) => parentOf(a, spans)?.name === 'invoke_workflow short-story')).toBe(true);

    // Each model call a chat span under its agent, with the model; each tool call an execute_tool span.
    const chats = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(chats.length).toBe(session.view().rounds);
    for (const c of chats) {
      expect(c.name).toBe(`chat ${runtime.model.label}`);
      expect(parentOf(c, spans)?.attributes['gen_ai.operation.name']).toBe('invoke_agent');
      expect(c.attributes).toMatchObject({ 'gen_ai.request.model': runtime.model.label, 'steward.round.outcome': 'replied' });
    }
    const tools = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(new Set(tools.map((t) => t.attributes['gen_ai.tool.name']))).toEqual(new Set(['read_blackboard', 'run_worker', 'submit', 'finish']));
    expect(
      tools.every((t) => parentOf(t, spans)?.attributes['gen_ai.operation.name'] === 'invoke_agent' && t.attributes['steward.tool.accepted'] === true),
    ).toBe(true);
  });

  it('a refused tool call names the rule that refused it', async () => {
    const { exporter, provider } = traced();
    const { ScriptedModel, scriptedCall } = await import('../../src/testing.js');
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('fly_to_the_moon', {}, 'call_x')] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Hm?' })] },
    ]);
    const session = await createRuntime({ model, tracerProvider: provider }).createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    const refused = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool fly_to_the_moon')!;
    expect(refused.attributes).toMatchObject({ 'steward.tool.accepted': false, 'steward.tool.refused_by': 'actorMayUseTool', 'gen_ai.tool.call.id': 'call_x' });
  });
});
