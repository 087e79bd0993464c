/**
 * `steward serve` with OTEL_TRACES_EXPORTER=otlp: the sessions it runs are traced to a
 * receiver on 127.0.0.1, and SIGTERM's graceful shutdown flushes the spans still queued
 * (OTEL_BSP_SCHEDULE_DELAY is ten minutes: none leave before it).
 */
import { expect, it } from 'vitest';
import { startCli, until } from '../support/cli-process.js';
import { useOtlpReceiver } from '../support/otlp-receiver.js';
import { useTempDir } from '../support/temp.js';
import { client } from './http.js';

const tmp = useTempDir('steward-serve-otel-');
const otlp = useOtlpReceiver();

it('traces the sessions it serves and flushes them on SIGTERM', async () => {
  const receiver = otlp.receiver();
  const cli = startCli(['serve', '--port', '0'], {
    db: tmp.path('serve.db'),
    env: {
      OTEL_SDK_DISABLED: '',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
      OTEL_SERVICE_NAME: 'steward-serve',
      OTEL_RESOURCE_ATTRIBUTES: '',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    },
    timeoutMs: 60_000,
  });
  let id = '';
  try {
    const base = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], 'the server URL', 30_000);
    const http = client(base);
    id = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', by: 'bob', text: 'Green tea.' })).status).toBe(200);
    expect(receiver.requests).toEqual([]);
  } finally {
    cli.child.kill('SIGTERM');
  }
  const result = await cli.result;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  const spans = receiver.spans();
  expect(spans.map((s) => s.name)).toEqual(
    expect.arrayContaining(['invoke_workflow tiny', 'steward.decision intake', 'invoke_agent manager', 'chat demo model (no LLM)']),
  );
  expect(spans.every((s) => s.attributes['gen_ai.conversation.id'] === id && s.resource['service.name'] === 'steward-serve')).toBe(true);
  expect(spans.find((s) => s.name === 'steward.decision intake')?.attributes['steward.decision.by']).toBe('bob');
}, 90_000);
