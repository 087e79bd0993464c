/**
 * Traces for operators, without code: the CLI and `steward serve` read the standard
 * OpenTelemetry environment (OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER, OTEL_LOG_LEVEL and, in
 * the SDK packages themselves, OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, OTEL_TRACES_SAMPLER). This file only decides from the
 * variables; the SDK is wired in ./otel-sdk.ts, imported dynamically when the environment asks
 * for an exporter, so a normal start loads none of it (test/cli/otel-lazy.test.ts).
 *
 * Unlike the spec, whose default exporter is `otlp`, nothing is exported unless
 * OTEL_TRACES_EXPORTER says so: a CLI must not start posting to localhost:4318 because a
 * variable is missing.
 */
import type { TracerProvider } from '@opentelemetry/api';
import * as z from 'zod';
import { StewardError } from '../core/errors.js';
import { quotedSetting } from '../core/limits.js';
import { safeText } from '../text/safe-text.js';
import type { CliIo } from './io.js';

/** The values of OTEL_TRACES_EXPORTER Steward understands (a comma-separated list of them). */
export const SUPPORTED_TRACES_EXPORTERS = ['otlp', 'none'] as const;

/** OTEL_LOG_LEVEL's values (the spec's), for the SDK's own messages on stderr. */
const LOG_LEVELS = ['none', 'error', 'warn', 'info', 'debug', 'verbose', 'all'] as const;
export type OtelLogLevel = (typeof LOG_LEVELS)[number];

/** What the environment asks for: the SDK's inputs once tracing is on. */
export interface TracesPlan {
  /** The exporters to start, each once (only `otlp` today). */
  exporters: readonly 'otlp'[];
  /** How much of the SDK's own diagnostics (an unreachable collector…) reaches stderr. */
  logLevel: OtelLogLevel;
}

/** A running provider from the environment, and the flush every exit path must await. */
export interface EnvTraces {
  tracerProvider: TracerProvider;
  /** Exports the spans still queued and stops; never throws (a failed export is a warning). */
  shutdown(): Promise<void>;
}

/**
 * An OTEL_* variable Steward cannot act on; the message names the variable, the value and
 * the values that work (code `usage`: the CLI prints it and exits 1 before opening the store).
 *
 * @example
 * try {
 *   tracesPlanFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' });
 * } catch (error) {
 *   if (TracesConfigError.isInstance(error)) console.error(error.message); // names otlp and none
 * }
 */
export class TracesConfigError extends StewardError {
  static override readonly errorName: string = 'TracesConfigError';
  constructor(message: string) {
    super('usage', message);
  }
}

const exporterList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.enum(SUPPORTED_TRACES_EXPORTERS)));

const logLevel = z
  .string()
  .transform((text) => text.trim().toLowerCase())
  .pipe(z.enum(LOG_LEVELS));

/** Unset and empty read alike (the spec's rule for every OTEL_* variable). */
const unsetWhenBlank = (value: string | undefined) => (value?.trim() ? value : undefined);

/**
 * What the OpenTelemetry environment asks of the CLI: null when traces are off (no
 * OTEL_TRACES_EXPORTER, `none`, or OTEL_SDK_DISABLED=true). Throws TracesConfigError for an
 * exporter Steward has not got; `warn` hears about settings it ignores.
 *
 * @example
 * tracesPlanFromEnv({ OTEL_TRACES_EXPORTER: 'otlp' }); // { exporters: ['otlp'], logLevel: 'warn' }
 * tracesPlanFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }); // null
 */
export function tracesPlanFromEnv(env: NodeJS.ProcessEnv, warn: (line: string) => void = () => {}): TracesPlan | null {
  const disabled = unsetWhenBlank(env.OTEL_SDK_DISABLED)?.trim().toLowerCase();
  if (disabled !== undefined && disabled !== 'true' && disabled !== 'false')
    warn(`OTEL_SDK_DISABLED is ${quotedSetting(disabled)}: only "true" disables the SDK; read as false.`);
  if (disabled === 'true') return null;
  const raw = unsetWhenBlank(env.OTEL_TRACES_EXPORTER);
  if (raw === undefined) return null;
  const parsed = exporterList.safeParse(raw);
  if (!parsed.success)
    throw new TracesConfigError(
      `OTEL_TRACES_EXPORTER is ${quotedSetting(raw)}: Steward exports traces with ${SUPPORTED_TRACES_EXPORTERS.map((e) => `"${e}"`).join(' or ')} ` +
        '(OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT). Set it to otlp, or unset it for no traces.',
    );
  const exporters = [...new Set(parsed.data)];
  if (exporters.includes('none') && exporters.length > 1)
    throw new TracesConfigError(`OTEL_TRACES_EXPORTER is ${quotedSetting(raw)}: "none" turns traces off and cannot be combined; set it to otlp or to none.`);
  if (!exporters.includes('otlp')) return null;
  checkProtocol(env, warn);
  return { exporters: ['otlp'], logLevel: logLevelOf(env, warn) };
}

/** The official HTTP exporter sends JSON; a collector's HTTP port (4318) takes it whatever the protocol variable says, gRPC's does not. */
function checkProtocol(env: NodeJS.ProcessEnv, warn: (line: string) => void): void {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const) {
    const value = unsetWhenBlank(env[name])?.trim();
    if (value === undefined) continue;
    if (value !== 'http/json' && value !== 'http/protobuf')
      warn(`${name} is ${quotedSetting(value)}: Steward sends OTLP over HTTP with JSON bodies; point the endpoint at the collector's HTTP port (4318).`);
    return;
  }
}

function logLevelOf(env: NodeJS.ProcessEnv, warn: (line: string) => void): OtelLogLevel {
  const raw = unsetWhenBlank(env.OTEL_LOG_LEVEL);
  if (raw === undefined) return 'warn';
  const parsed = logLevel.safeParse(raw);
  if (parsed.success) return parsed.data;
  warn(`OTEL_LOG_LEVEL is ${quotedSetting(raw)}: use one of ${LOG_LEVELS.join(', ')}; using warn.`);
  return 'warn';
}

/**
 * The tracer provider the environment asks for, started; undefined when it asks for none.
 * The SDK packages are imported here, on demand: without OTEL_TRACES_EXPORTER nothing of
 * them is loaded. The caller must await `shutdown()` before it exits, or queued spans are lost.
 *
 * @example
 * const traces = await tracesFromEnv({ env: process.env, stderr: process.stderr });
 * const runtime = createRuntime({ model, ...(traces ? { tracerProvider: traces.tracerProvider } : {}) });
 * // … at the end:
 * await traces?.shutdown();
 */
export async function tracesFromEnv(io: Pick<CliIo, 'env' | 'stderr'>): Promise<EnvTraces | undefined> {
  // Env values and collector replies are echoed: shown safe for a terminal.
  const warn = (line: string) => io.stderr.write(`steward: ${safeText(line)}\n`);
  const plan = tracesPlanFromEnv(io.env, warn);
  if (!plan) return undefined;
  const { startTraces } = await import('./otel-sdk.js');
  return startTraces(plan, warn);
}
