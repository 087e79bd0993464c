/**
 * Model errors say what to do: an HTML error page is cut to its status and a short excerpt;
 * statuses that waiting cannot heal (400, 401, 403, 404, 501) are tried once and name the
 * setting to check instead of "try again later". Real `openai` client, fake server.
 */
import { afterEach, expect, it } from 'vitest';
import { ModelError } from '../../src/core/errors.js';
import { OpenAIModel } from '../../src/models/openai-model.js';
import { redactSecrets } from '../../src/core/models/redact.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function failWith(script: FakeStep[], apiKey = 'test-key'): Promise<{ error: ModelError; server: FakeOpenAI }> {
  const server = await startFakeOpenAI(script);
  servers.push(server);
  const model = new OpenAIModel({ apiKey, baseURL: server.baseURL, model: 'test-model', timeoutMs: 2_000, maxRetries: 2 });
  const error = await model.complete({ agent: 'manager', messages: [{ role: 'user', content: 'hi' }], tools: [] }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return { error: error as ModelError, server };
}

const HTML =
  `<!DOCTYPE html><html><head><title>502 Bad ` +
  `Gateway</title><style>body{color:red}</style></head><body><h1>Bad Gateway</h1><p>The proxy could ` +
  `not reach the upstream.</p>${'<div>filler</div>'.repeat(2_000)}</body></html>`;

it('trims an HTML error page to its status line and a short excerpt', async () => {
  const page = { status: 502, body: HTML, headers: { 'content-type': 'text/html' } };
  const { error } = await failWith([page, page, page]);
  expect(error.message).toMatch(/^The server at http:\/\/127\.0\.0\.1:\d+\/v1 answered 502: an HTML page "502 Bad Gateway"/);
  expect(error.message).toContain('Bad Gateway The proxy could not reach the upstream.');
  expect(error.message).not.toMatch(/<|color:red/);
  expect(error.message.length).toBeLessThan(600);
});

for (const [status, setting] of [
  [400, 'STEWARD_MODEL'],
  [401, 'OPENAI_API_KEY'],
  [403, 'OPENAI_API_KEY'],
  [404, 'STEWARD_MODEL'],
  [501, 'OPENAI_BASE_URL'],
] as const) {
  it(`does not retry a ${status}, names ${setting} and never says "try again later"`, async () => {
    const { error, server } = await failWith([{ status }, { status }, { status }]);
    expect(server.requests).toHaveLength(1);
    expect(error.message).toContain(`answered ${status}`);
    expect(error.message).toContain(setting);
    expect(error.message).not.toMatch(/try again later|attempts/);
  });
}

it('still retries a 503 (it may heal) and says so', async () => {
  const { error, server } = await failWith([{ status: 503 }, { status: 503 }, { status: 503 }]);
  expect(server.requests).toHaveLength(3);
  expect(error.message).toMatch(/3 attempts/);
});

it('masks the key a provider echoes back, and the configured key wherever it appears', async () => {
  const key = 'my-local-secret-key-42';
  const { error } = await failWith([{ status: 401, body: { error: { message: `Incorrect API key provided: ${key} (also sk-live-ABCDEFGH12345678)` } } }], key);
  expect(error.message).toContain('Incorrect API key provided: *** (also sk-…)');
  expect(error.message).not.toContain('ABCDEFGH');
});

it('redactSecrets masks keys, bearer tokens, key parameters and URL credentials', () => {
  expect(redactSecrets('GET https://bob:pw@example.com/v1?api_key=abcd1234 with Bearer eyJhbGciOi.x.y and sk-abcdefghijkl')).toBe(
    'GET https://***@example.com/v1?api_key=*** with Bearer *** and sk-…',
  );
  expect(redactSecrets('No secrets in here: sk-1 is short, so is a://b.')).toBe('No secrets in here: sk-1 is short, so is a://b.');
});
