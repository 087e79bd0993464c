/**
 * A normal start pays nothing for traces: without OTEL_TRACES_EXPORTER the real `steward run`
 * (a whole session, offline demo model) loads no OpenTelemetry SDK module — only
 * @opentelemetry/api, which the runtime's tracing listener is written against. A module
 * hook (test/api/record-modules.mjs) lists every module the child resolves; importing the
 * SDK (or src/cli/otel-sdk.ts) eagerly anywhere on the CLI's path shows up in that list.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliBin, root, startCli } from '../support/cli-process.js';
import { closedPort, useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-otel-lazy-');
// The CLI runs bundled (cli-build.ts, as `npm run build` bundles it): a module it loads later is a chunk named after it.
const SDK = /[\\/]node_modules[\\/]@opentelemetry[\\/](?!api[\\/])|[\\/]dist[\\/]cli[\\/]bundle[\\/]chunks[\\/]otel-sdk-[A-Z0-9]+\.js$/;

/** The OpenTelemetry modules beyond the API that `steward run --auto` resolved with this environment, and its stderr. */
async function sdkModulesLoaded(name: string, env: Record<string, string>): Promise<{ modules: string[]; stderr: string }> {
  const log = tmp.path(`${name}.log`);
  const command = [process.execPath, '--import', join(root, 'test/api/record-modules.mjs'), cliBin()];
  const result = await startCli(
    ['run', '--auto', '--package', 'tiny', '--inspect', 'off'],
    { db: tmp.path(`${name}.db`), env: { ...env, STEWARD_MODULE_LOG: log } },
    command,
  ).result;
  expect(result.code, result.stderr).toBe(0);
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  expect(loaded.some((url) => url.endsWith('/dist/cli/bundle/main.js'))).toBe(true);
  return { modules: [...new Set(loaded.filter((url) => SDK.test(url)).map((url) => url.replace(/^.*node_modules[\\/]/, '')))], stderr: result.stderr };
}

it('without OTEL_TRACES_EXPORTER no OpenTelemetry SDK module is loaded', async () => {
  expect((await sdkModulesLoaded('off', { OTEL_TRACES_EXPORTER: '', OTEL_SDK_DISABLED: '' })).modules).toEqual([]);
}, 90_000);

it('with it the SDK is loaded: the check sees the modules when they are there', async () => {
  // Nothing listens on the endpoint: the export fails (a warning on stderr, after the exporter's retries for OTEL_EXPORTER_OTLP_TIMEOUT), the run does not.
  const port = await closedPort();
  const { modules: loaded, stderr } = await sdkModulesLoaded('on', {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_SDK_DISABLED: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
  });
  expect(stderr).toContain(`steward: OpenTelemetry: the last spans were not exported: Error: connect ECONNREFUSED 127.0.0.1:${port}`);
  for (const expected of [/^@opentelemetry\/sdk-trace-base\//, /^@opentelemetry\/exporter-trace-otlp-http\//, /^@opentelemetry\/resources\//])
    expect(
      loaded.some((m) => expected.test(m)),
      `${expected} in ${loaded.join(', ')}`,
    ).toBe(true);
}, 90_000);
