/**
 * A local OTLP/HTTP receiver for the tests of traces from the environment: POST /v1/traces
 * on 127.0.0.1, each request's headers and JSON body kept (the official HTTP exporter sends
 * JSON), and the spans flattened with their resource's attributes.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll } from 'vitest';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; arrayValue?: unknown };
type KeyValue = { key: string; value: AnyValue };

interface ExportBody {
  resourceSpans: {
    resource: { attributes: KeyValue[] };
    scopeSpans: { scope: { name: string }; spans: { name: string; traceId: string; attributes: KeyValue[] }[] }[];
  }[];
}

/** One received span: its name, scope, attributes and its resource's, as plain records. */
export interface ReceivedSpan {
  name: string;
  scope: string;
  traceId: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  base: string;
  /** What arrived at POST /v1/traces, in order. */
  readonly requests: { headers: IncomingHttpHeaders; body: ExportBody }[];
  /** Every span received so far. */
  spans(): ReceivedSpan[];
}

const plain = (value: AnyValue): unknown => value.stringValue ?? value.intValue ?? value.boolValue ?? value.arrayValue;
const record = (attributes: KeyValue[]) => Object.fromEntries(attributes.map((a) => [a.key, plain(a.value)]));

async function text(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

/**
 * Registers beforeAll/afterAll hooks: a receiver listens for the test file's tests. Each
 * test takes `clear()`ed state from `receiver()`, so tests that run one after another do
 * not see each other's spans.
 */
export function useOtlpReceiver(): { receiver(): OtlpReceiver } {
  const requests: OtlpReceiver['requests'] = [];
  let base = '';
  const server = createServer((req, res) => {
    void text(req).then((body) => {
      if (req.method === 'POST' && req.url === '/v1/traces') requests.push({ headers: req.headers, body: JSON.parse(body) as ExportBody });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const received: OtlpReceiver = {
    get base() {
      return base;
    },
    requests,
    spans: () =>
      requests.flatMap(({ body }) =>
        body.resourceSpans.flatMap((r) =>
          r.scopeSpans.flatMap((s) =>
            s.spans.map((span) => ({
              name: span.name,
              scope: s.scope.name,
              traceId: span.traceId,
              attributes: record(span.attributes),
              resource: record(r.resource.attributes),
            })),
          ),
        ),
      ),
  };
  return {
    receiver: () => {
      requests.length = 0;
      return received;
    },
  };
}
