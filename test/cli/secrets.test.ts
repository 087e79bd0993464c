/**
 * Secrets never reach the store or the terminal: a provider error that echoes the API key
 * and credentials in OPENAI_BASE_URL are masked in the notice, the journal, `show` and `log`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const CLI_TIMEOUT = 90_000;
const KEY = 'sk-proj-SECRETabcdef0123456789XYZ';
const tmp = useTempDir('steward-secrets-');
const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function everythingPrinted(db: string, env: Record<string, string>): Promise<string> {
  const run = await runCli(['run', '--package', 'tiny', '--request', 'A lighthouse'], { db, env });
  const id = /session (s_\w+)/.exec(run.stdout)?.[1];
  expect(id, run.stdout + run.stderr).toBeTruthy();
  const show = await runCli(['show', id!], { db });
  const showJson = await runCli(['show', id!, '--json'], { db });
  const log = await runCli(['log', id!, '--json'], { db });
  return [
    run.stdout,
    run.stderr,
    show.stdout,
    show.stderr,
    showJson.stdout,
    log.stdout,
    readFileSync(db, 'latin1'),
    existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`, 'latin1') : '',
  ].join('\n');
}

it(
  'masks an API key echoed by a 401 in the notice, the journal, show and log',
  async () => {
    const server = await startFakeOpenAI([
      {
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
      },
    ]);
    servers.push(server);
    const all = await everythingPrinted(tmp.path('key.db'), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL, STEWARD_MODEL: 'fake-model' });
    expect(all.includes('Incorrect API key provided: sk-…'), 'the masked key').toBe(true);
    expect(all.includes('Check OPENAI_API_KEY'), 'the advice').toBe(true);
    expect(all.includes('SECRETabcdef'), 'a secret was printed or stored').toBe(false);
  },
  CLI_TIMEOUT,
);

it(
  'masks user:password in OPENAI_BASE_URL wherever the failure is shown or stored',
  async () => {
    const server = await startFakeOpenAI([]);
    servers.push(server);
    const baseURL = server.baseURL.replace('http://', 'http://alice:hunter2pass@');
    const all = await everythingPrinted(tmp.path('url.db'), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: baseURL, STEWARD_MODEL: 'fake-model' });
    expect(all.includes('OPENAI_BASE_URL'), 'the setting').toBe(true);
    expect(all.includes('http://***@127.0.0.1'), 'the masked URL').toBe(true);
    expect(all.includes('hunter2pass'), 'a secret was printed or stored').toBe(false);
    expect(all.includes('alice'), 'a secret was printed or stored').toBe(false);
    expect(all.includes('SECRETabcdef'), 'a secret was printed or stored').toBe(false);
  },
  CLI_TIMEOUT,
);
