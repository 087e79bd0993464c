/**
 * The OpenTelemetry SDK wired from the environment: imported only by ./otel-env.ts, and only
 * dynamically, once OTEL_TRACES_EXPORTER asks for an exporter (these packages cost a normal
 * start nothing). The official packages read their own variables from `process.env`: the
 * exporter OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT / _HEADERS / _TIMEOUT / _COMPRESSION, the
 * provider OTEL_TRACES_SAMPLER(_ARG) and the span limits, the batch processor OTEL_BSP_*, the
 * resource detector OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Steward adds only what
 * the spec leaves to the app: the default service name, and where the SDK's messages go.
 */
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { EnvTraces, OtelLogLevel, TracesPlan } from './otel-env.js';

/** `service.name` when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one (the SDK's own default is "unknown_service:node"). */
export const DEFAULT_SERVICE_NAME = 'steward';

const DIAG_LEVELS: Record<OtelLogLevel, DiagLogLevel> = {
  none: DiagLogLevel.NONE,
  error: DiagLogLevel.ERROR,
  warn: DiagLogLevel.WARN,
  info: DiagLogLevel.INFO,
  debug: DiagLogLevel.DEBUG,
  verbose: DiagLogLevel.VERBOSE,
  all: DiagLogLevel.ALL,
};

/**
 * A started provider for `plan`: a batch processor per exporter (spans leave in the
 * background, never on a session's path), the resource from the environment over Steward's
 * defaults, and the SDK's diagnostics (a collector that cannot be reached…) through `warn`.
 *
 * @example
 * const traces = startTraces({ exporters: ['otlp'], logLevel: 'warn' }, (line) => console.error(line));
 * createRuntime({ model, tracerProvider: traces.tracerProvider });
 * await traces.shutdown(); // before the process exits
 */
export function startTraces(plan: TracesPlan, warn: (line: string) => void): EnvTraces {
  // Without a logger the SDK's errors (a failed export) vanish: the operator would see no spans and no reason.
  diag.setLogger(diagLogger(warn), { logLevel: DIAG_LEVELS[plan.logLevel], suppressOverrideMessage: true });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: plan.exporters.map(() => new BatchSpanProcessor(new OTLPTraceExporter())),
  });
  return {
    tracerProvider: provider,
    // shutdown() exports what is queued first; a collector that is down must not change the command's exit code.
    shutdown: () => provider.shutdown().catch((error: unknown) => warn(`OpenTelemetry: the last spans were not exported: ${String(error)}`)),
  };
}

function diagLogger(warn: (line: string) => void): DiagLogger {
  const say =
    (level: string) =>
    (message: string, ...args: unknown[]) =>
      warn(`OpenTelemetry ${level}: ${[message, ...args.map(String)].join(' ')}`);
  return { error: say('error'), warn: say('warning'), info: say('info'), debug: say('debug'), verbose: say('verbose') };
}
