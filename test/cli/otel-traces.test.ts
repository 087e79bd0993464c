/**
 * Traces without code: the real `steward` (a child process, offline demo model, its own
 * SQLite file) reads the standard OpenTelemetry variables and exports its sessions' spans
 * over OTLP/HTTP to a receiver on 127.0.0.1. OTEL_BSP_SCHEDULE_DELAY is ten minutes, so the
 * spans can only arrive through the flush at the command's end.
 */
import { expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useOtlpReceiver } from '../support/otlp-receiver.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-otel-cli-');
const otlp = useOtlpReceiver();
const CLI_TIMEOUT = 90_000;

/** Only what a test sets: whatever OTEL_* the shell running the tests has is blanked (blank reads as unset). */
const otelEnv = (extra: Record<string, string>): Record<string, string> => ({
  OTEL_SDK_DISABLED: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_SERVICE_NAME: '',
  OTEL_RESOURCE_ATTRIBUTES: '',
  OTEL_EXPORTER_OTLP_HEADERS: '',
  OTEL_BSP_SCHEDULE_DELAY: '600000',
  ...extra,
});

it(
  '`steward run` exports its session to OTEL_EXPORTER_OTLP_ENDPOINT, with the service name, resource attributes and headers of the environment',
  async () => {
    const receiver = otlp.receiver();
    const result = await runCli(['run', '--auto', '--package', 'tiny', '--inspect', 'off', '--request', 'Otters.'], {
      process: true,
      db: tmp.path('run.db'),
      env: otelEnv({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
        OTEL_SERVICE_NAME: 'steward-ops',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,team=platform',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=acme',
      }),
      timeoutMs: CLI_TIMEOUT,
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const id = /session (s_\S+)/.exec(result.stdout)![1]!;
    const spans = receiver.spans();
    const names = new Set(spans.map((s) => s.name));
    const expected = ['invoke_workflow tiny', 'steward.decision intake', 'steward.decision approve_step', 'invoke_agent manager', 'invoke_agent echo'];
    for (const name of [...expected, 'chat demo model (no LLM)', 'execute_tool run_worker', 'execute_tool finish'])
      expect(names, [...names].join(', ')).toContain(name);
    expect(spans.every((s) => s.scope === 'steward' && s.attributes['gen_ai.conversation.id'] === id)).toBe(true);
    expect(spans[0]!.resource).toMatchObject({ 'service.name': 'steward-ops', 'deployment.environment.name': 'test', team: 'platform' });
    expect(receiver.requests.every((r) => r.headers['x-tenant'] === 'acme')).toBe(true);
  },
  CLI_TIMEOUT,
);

it(
  '`steward send` flushes its spans before it exits (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; service.name "steward" by default)',
  async () => {
    const db = tmp.path('send.db');
    const created = parseJson<ViewJson>(await runCli(['new', '--package', 'tiny', '--json'], { process: true, db, env: otelEnv({}) }));
    const receiver = otlp.receiver();
    const env = otelEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.base}/v1/traces` });
    const sent = await runCli(['send', created.id, 'input', '--text', 'Green tea.', '--as', 'alice', '--json'], {
      process: true,
      db,
      env,
      timeoutMs: CLI_TIMEOUT,
    });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stderr).toBe('');
    expect(parseJson<ViewJson>(sent).state).toBe('waiting_user.approve_step');
    const spans = receiver.spans();
    const decision = spans.find((s) => s.name === 'steward.decision intake');
    expect(decision?.attributes).toMatchObject({ 'gen_ai.conversation.id': created.id, 'steward.decision.by': 'alice' });
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['invoke_workflow tiny', 'invoke_agent manager', 'chat demo model (no LLM)']));
    expect(new Set(spans.map((s) => s.resource['service.name']))).toEqual(new Set(['steward']));
  },
  CLI_TIMEOUT,
);

it(
  'an exporter Steward has not got stops the command before it opens the store, naming the values that work',
  async () => {
    const result = await runCli(['new', '--package', 'tiny'], { process: true, db: tmp.path('zipkin.db'), env: otelEnv({ OTEL_TRACES_EXPORTER: 'zipkin' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'steward [usage]: OTEL_TRACES_EXPORTER is "zipkin": Steward exports traces with "otlp" or "none" (OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT). ' +
        'Set it to otlp, or unset it for no traces.\n',
    );
  },
  CLI_TIMEOUT,
);

it(
  'OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none export nothing',
  async () => {
    const receiver = otlp.receiver();
    const offs: Record<string, string>[] = [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }];
    for (const extra of offs) {
      const result = await runCli(['run', '--auto', '--package', 'tiny', '--inspect', 'off'], {
        process: true,
        db: tmp.path('off.db'),
        env: otelEnv({ ...extra, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base }),
        timeoutMs: CLI_TIMEOUT,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
    }
    expect(receiver.requests).toEqual([]);
  },
  CLI_TIMEOUT,
);
