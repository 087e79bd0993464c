/** What the OpenTelemetry environment asks of the CLI (src/cli/otel-env.ts), decided without loading the SDK. */
import { describe, expect, it } from 'vitest';
import { TracesConfigError, tracesPlanFromEnv } from '../../src/cli/otel-env.js';

/** The plan for `env`, and the warnings it gave. */
function plan(env: NodeJS.ProcessEnv) {
  const warnings: string[] = [];
  return { plan: tracesPlanFromEnv(env, (line) => warnings.push(line)), warnings };
}

describe('tracesPlanFromEnv', () => {
  it('is off unless OTEL_TRACES_EXPORTER asks: unset, blank and none', () => {
    for (const env of [{}, { OTEL_TRACES_EXPORTER: '' }, { OTEL_TRACES_EXPORTER: '  ' }, { OTEL_TRACES_EXPORTER: 'none' }, { OTEL_TRACES_EXPORTER: 'NONE' }])
      expect(plan(env)).toEqual({ plan: null, warnings: [] });
  });

  it('otlp, in any case and listed twice, is one OTLP exporter at log level warn', () => {
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ plan: { exporters: ['otlp'], logLevel: 'warn' }, warnings: [] });
    expect(plan({ OTEL_TRACES_EXPORTER: ' OTLP , otlp,' }).plan).toEqual({ exporters: ['otlp'], logLevel: 'warn' });
  });

  it('OTEL_SDK_DISABLED=true (any case) turns it off; another value than true or false is read as false, with a warning', () => {
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'TRUE' }).plan).toBeNull();
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' })).toEqual({ plan: { exporters: ['otlp'], logLevel: 'warn' }, warnings: [] });
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'yes' })).toEqual({
      plan: { exporters: ['otlp'], logLevel: 'warn' },
      warnings: ['OTEL_SDK_DISABLED is "yes": only "true" disables the SDK; read as false.'],
    });
  });

  it('an exporter Steward has not got is a usage error naming the values that work', () => {
    for (const value of ['zipkin', 'otlp,jaeger', 'console']) {
      const error = (() => {
        try {
          tracesPlanFromEnv({ OTEL_TRACES_EXPORTER: value });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(TracesConfigError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({
        code: 'usage',
        message: `OTEL_TRACES_EXPORTER is "${value}": Steward exports traces with "otlp" or "none" (OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT). Set it to otlp, or unset it for no traces.`,
      });
    }
    expect(() => tracesPlanFromEnv({ OTEL_TRACES_EXPORTER: 'otlp,none' })).toThrow('"none" turns traces off and cannot be combined');
  });

  it('OTEL_LOG_LEVEL sets how much of the SDK reaches stderr; an unknown level warns and keeps warn', () => {
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_LOG_LEVEL: 'DEBUG' }).plan?.logLevel).toBe('debug');
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_LOG_LEVEL: 'loud' })).toEqual({
      plan: { exporters: ['otlp'], logLevel: 'warn' },
      warnings: ['OTEL_LOG_LEVEL is "loud": use one of none, error, warn, info, debug, verbose, all; using warn.'],
    });
  });

  it('a protocol other than HTTP is a warning: the official HTTP exporter sends JSON, which a collector takes on its HTTP port', () => {
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).warnings).toEqual([]);
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).warnings).toEqual([]);
    expect(plan({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).warnings).toEqual([
      `OTEL_EXPORTER_OTLP_PROTOCOL is "grpc": Steward sends OTLP over HTTP with JSON bodies; point the endpoint at the collector's HTTP port (4318).`,
    ]);
    // Off: nothing to warn about.
    expect(plan({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_LOG_LEVEL: 'loud' }).warnings).toEqual([]);
  });
});
