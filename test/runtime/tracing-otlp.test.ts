/**
 * Exporting a session's traces over OTLP/HTTP (JSON) to a collector: here a tiny receiver on
 * 127.0.0.1 that keeps what it is sent. This is how an app wires Steward to Jaeger, Tempo or
 * an OpenTelemetry Collector: its own SDK and exporter, passed as `tracerProvider`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** A local OTLP/HTTP receiver: POST /v1/traces, JSON bodies kept in order. */
async function receiver(): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const read = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    return text;
  };
  const server = createServer((req, res) => {
    void read(req).then((text) => {
      if (req.method === 'POST' && req.url === '/v1/traces') bodies.push(JSON.parse(text));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/v1/traces`, bodies };
}

it('exports the spans of a session as OTLP to a local receiver', async () => {
  const otlp = await receiver();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: otlp.url }))] });
  const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] }]);
  const session = await createRuntime({ model, tracerProvider: provider }).createSession({ packageId: 'tiny' });
  await session.send({ type: 'user_submitted_input', text: 'Otters.', by: 'alice' });
  await provider.forceFlush();
  await provider.shutdown();
  type Body = {
    resourceSpans: { scopeSpans: { scope: { name: string }; spans: { name: string; attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[];
  };
  const spans = (otlp.bodies as Body[]).flatMap((b) =>
    b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ scope: s.scope.name, ...span })))),
  );
  expect(new Set(spans.map((s) => s.name))).toEqual(
    new Set(['invoke_workflow tiny', 'steward.decision intake', 'invoke_agent manager', 'chat scripted model', 'execute_tool finish']),
  );
  expect(spans.every((s) => s.scope === 'steward')).toBe(true);
  const decision = spans.find((s) => s.name === 'steward.decision intake')!;
  expect(decision.attributes).toContainEqual({ key: 'steward.decision.by', value: { stringValue: 'alice' } });
  expect(decision.attributes).toContainEqual({ key: 'gen_ai.conversation.id', value: { stringValue: session.id } });
});
