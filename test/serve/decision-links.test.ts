/**
 * Decision links over plain HTTP on 127.0.0.1 (startServe, fetch): a link is made for the
 * open wait, its page changes nothing, its decision is journalled as the recipient's via the
 * link, once. Forged, expired, reused links and links of another wait or session decide
 * nothing; a post from another site's page is refused; a token never reaches the log.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import type { SessionView } from '../../src/core/view.js';
import { DecisionLinks, linkSecretFromEnv } from '../../src/http/decision-links.js';
import type { NamedToken } from '../../src/http/tokens.js';
import type { Model } from '../../src/core/models/model.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { createServeApp } from '../../src/serve/embed.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { client } from './http.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-links-');

const TOKEN = 'links-token-0123456789abcdef';
const SECRET = 'a'.repeat(24) + '0123456789abcdef0123456789abcdef';
const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serveWithLinks(options: { model?: Model; linkSecret?: string | null; tokens?: NamedToken[]; corsOrigins?: string[] } = {}) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: options.model ?? new DemoModel(), store });
  const logged: string[] = [];
  const auth = options.tokens ? { tokens: options.tokens } : { token: TOKEN };
  const server = await startServe({
    runtime,
    store,
    port: 0,
    log: (line) => logged.push(line),
    ...auth,
    ...(options.linkSecret !== null ? { linkSecret: options.linkSecret ?? SECRET } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
  });
  open.push(server);
  const http = client(server.url, TOKEN);
  return { server, store, http, logged };
}

type Http = ReturnType<typeof client>;

/** A session of the tiny package waiting for its step's approval. */
async function atApproval(http: Http): Promise<SessionView> {
  const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
  const sent = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A short note.' });
  expect(sent.body.view.waitingReason).toBe('approve_step');
  return sent.body.view;
}

/** GET and POST a link as a browser's page would, without any credential of the API. */
async function getLink(url: string) {
  const res = await fetch(url);
  return { status: res.status, text: await res.text(), headers: res.headers };
}
async function postLink(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The session's revision and journal length: what "changes nothing" compares. */
async function footprint(http: Http, id: string) {
  const got = await http.get(`/sessions/${id}`);
  const journal = await http.get(`/sessions/${id}/journal?limit=1000`);
  return { revision: got.body.revision, entries: journal.body.entries.length, state: got.body.view.state };
}

/** The user events of `type` the session's journal holds. */
async function journalled(http: Http, id: string, type: string): Promise<Record<string, unknown>[]> {
  const entries = (await http.get(`/sessions/${id}/journal?limit=1000`)).body.entries as { type: string; payload: Record<string, unknown> }[];
  return entries.filter((e) => e.type === type).map((e) => e.payload);
}

/** Waits until the session waits again (or is done), having left `wait`. */
async function settledAfter(http: Http, id: string, wait: number): Promise<SessionView> {
  let view: SessionView | undefined;
  await expect
    .poll(
      async () => {
        view = (await http.get(`/sessions/${id}`)).body.view;
        return view!.phase !== 'running' && view!.wait !== wait;
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  return view!;
}

describe('decision links', () => {
  it('makes a link for the open wait; its page shows the step and changes nothing; its decision is journalled as the recipient via the link, once', async () => {
    const { http, server, logged } = await serveWithLinks();
    const view = await atApproval(http);
    const made = await http.post(`/sessions/${view.id}/links`, { recipient: 'alice', expiresIn: '2h' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ sessionId: view.id, wait: view.wait, recipient: 'alice', linkId: expect.stringMatching(/^[\w-]{12}$/) });
    expect(made.body.url).toMatch(new RegExp(`^${server.url}/links/[\\w-]+\\.[\\w-]+$`));
    expect(Date.parse(made.body.expiresAt) - Date.now()).toBeGreaterThan(2 * 3600_000 - 60_000);

    const before = await footprint(http, view.id);
    const page = await getLink(made.body.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'.*style-src 'sha256-[^']+'.*form-action 'self'.*frame-ancestors 'none'/);
    expect(page.headers.get('content-security-policy')).not.toMatch(/script-src|unsafe-inline/);
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).not.toMatch(/<script/i);
    expect(page.text).toContain(view.pendingStep!.reason.split("'")[0]); // as text: an apostrophe is &#39;
    expect(page.text).toMatch(/name="decision" value="approve"/);
    expect(page.text).toMatch(/name="decision" value="reject"/);
    // One decision asked for (a chat message's button): that form alone.
    const approveOnly = await getLink(`${made.body.url}?decision=approve`);
    expect(approveOnly.text).toMatch(/name="decision" value="approve"/);
    expect(approveOnly.text).not.toMatch(/name="decision" value="reject"/);
    // Parameters a mail service adds, or a decision the wait does not offer: the whole page.
    const tracked = await getLink(`${made.body.url}?utm_source=mail&decision=accept`);
    expect(tracked.status).toBe(200);
    expect(tracked.text).toMatch(/value="approve".*value="reject"/s);
    // HEAD and GET again: nothing changes.
    expect((await fetch(made.body.url, { method: 'HEAD' })).status).toBe(200);
    expect(await footprint(http, view.id)).toEqual(before);

    const decided = await postLink(made.body.url, { decision: 'approve' }, { origin: server.url, 'sec-fetch-site': 'same-origin' });
    expect(decided.status, decided.text).toBe(200);
    expect(decided.text).toContain('You approved the step');
    const after = await settledAfter(http, view.id, view.wait!);
    expect(after.state).not.toBe('waiting_user.approve_step');
    const approvals = await journalled(http, view.id, 'user_approved_next_step');
    expect(approvals).toEqual([
      { type: 'user_approved_next_step', by: 'alice', via: `link:${made.body.linkId}`, through: 'link', wait: view.wait, at: expect.any(String) },
    ]);
    // The audit trail names the person and the link the decision came through.
    const audit = await http.get(`/sessions/${view.id}/audit`);
    const rows = String(audit.body)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.find((row) => row.wait === view.wait)).toMatchObject({ by: 'alice', via: `link:${made.body.linkId}`, through: 'link', decision: 'approved' });

    // Reused: the page says so, the post changes nothing.
    const settled = await footprint(http, view.id);
    const reopened = await getLink(made.body.url);
    expect(reopened.status).toBe(200);
    expect(reopened.text).toContain('no longer open');
    expect(reopened.text).not.toMatch(/name="decision"/);
    for (const decision of ['approve', 'reject']) {
      const again = await postLink(made.body.url, { decision });
      expect(again.status).toBe(409);
      expect(again.text).toContain('changes nothing');
    }
    expect(await footprint(http, view.id)).toEqual(settled);
    // The token is a credential: no log line holds it.
    const token = made.body.url.split('/links/')[1];
    expect(logged.join('\n')).not.toContain(token);
  });

  it('takes a JSON decision too (reject with a reason), answered in JSON', async () => {
    const { http } = await serveWithLinks();
    const view = await atApproval(http);
    const { url, linkId } = (await http.post(`/sessions/${view.id}/links`, { recipient: 'bob', wait: view.wait })).body;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'reject', reason: 'Not this worker.' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ decided: 'reject', sessionId: view.id, wait: view.wait, by: 'bob', via: `link:${linkId}` });
    await settledAfter(http, view.id, view.wait!);
    expect(await journalled(http, view.id, 'user_rejected_next_step')).toEqual([
      {
        type: 'user_rejected_next_step',
        reason: 'Not this worker.',
        by: 'bob',
        via: `link:${linkId}`,
        through: 'link',
        wait: view.wait,
        at: expect.any(String),
      },
    ]);
    // A decision the wait does not offer, in JSON: refused in the error body.
    const other = await atApproval(http);
    const link = (await http.post(`/sessions/${other.id}/links`, { recipient: 'bob' })).body.url;
    const wrong = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'accept' }) });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toMatch(/"accept" is not a decision this wait allows: approve, reject/);
    const unknownField = await fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', by: 'mallory' }),
    });
    expect(unknownField.status).toBe(400);
    expect((await footprint(http, other.id)).state).toBe('waiting_user.approve_step');
  });

  it('decides nothing with a forged, expired, other-wait or spliced token', async () => {
    const { http, server } = await serveWithLinks();
    const view = await atApproval(http);
    const other = await atApproval(http);
    const before = await footprint(http, view.id);
    const made = (await http.post(`/sessions/${view.id}/links`, { recipient: 'alice' })).body;
    const token: string = made.url.split('/links/')[1];
    const [body, sig] = token.split('.') as [string, string];
    const at = (t: string) => `${server.url}/links/${t}`;

    // A flipped signature, another secret's, a body edited to name another session, junk, an overlong token.
    const flipped = `${body}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BA' : 'AA'}`;
    const otherSecret = new DecisionLinks('b'.repeat(40)).issue({ session: view.id, wait: view.wait!, recipient: 'alice' }).token;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const edited = `${Buffer.from(JSON.stringify({ ...claims, s: other.id })).toString('base64url')}.${sig}`;
    const otherSessionToken = (await http.post(`/sessions/${other.id}/links`, { recipient: 'alice' })).body.url.split('/links/')[1] as string;
    const spliced = `${otherSessionToken.split('.')[0]}.${sig}`;
    for (const forged of [flipped, otherSecret, edited, spliced, 'not-a-link', 'x'.repeat(3000)]) {
      const page = await getLink(at(forged));
      expect(page.status, forged.slice(0, 20)).toBe(404);
      expect(page.text).toContain('Not a valid link');
      expect((await postLink(at(forged), { decision: 'approve' })).status).toBe(404);
    }

    // Expired: signed with the same secret by a clock two hours behind, for one hour.
    const expired = new DecisionLinks(SECRET, { now: () => Date.now() - 2 * 3600_000 }).issue({
      session: view.id,
      wait: view.wait!,
      recipient: 'alice',
      expiresIn: '1h',
    });
    const gone = await getLink(at(expired.token));
    expect(gone.status).toBe(410);
    expect(gone.text).toContain('This link has expired');
    expect((await postLink(at(expired.token), { decision: 'approve' })).status).toBe(410);

    // Another wait of the same session (an earlier one, and one not yet open): nothing to decide.
    const signer = new DecisionLinks(SECRET);
    for (const wait of [view.wait! - 1, view.wait! + 1]) {
      const { token: otherWait } = signer.issue({ session: view.id, wait, recipient: 'alice' });
      expect((await getLink(at(otherWait))).text).toContain('Nothing to decide');
      const refused = await postLink(at(otherWait), { decision: 'approve' });
      expect(refused.status).toBe(409);
    }
    expect(await footprint(http, view.id)).toEqual(before);
    expect((await footprint(http, other.id)).state).toBe('waiting_user.approve_step');

    // The other session's own link decides the other session only.
    expect((await postLink(at(otherSessionToken), { decision: 'approve' })).status).toBe(200);
    await settledAfter(http, other.id, other.wait!);
    expect(await footprint(http, view.id)).toEqual(before);
  });

  it("refuses a post from another site's page (Origin, Sec-Fetch-Site), also from an origin listed for CORS", async () => {
    const cors = 'http://app.example.test';
    const { http, server } = await serveWithLinks({ corsOrigins: [cors] });
    const view = await atApproval(http);
    const { url } = (await http.post(`/sessions/${view.id}/links`, { recipient: 'alice' })).body;
    const before = await footprint(http, view.id);
    // The app's Origin guard: a foreign origin gets no answer of the route at all.
    const foreign = await postLink(url, { decision: 'approve' }, { origin: 'http://evil.example.test' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.text).error.code).toBe('forbidden_origin');
    // The route's own check: a CORS origin, a cross-site or same-site fetch, whatever Origin it names.
    const posts: Record<string, string>[] = [
      { origin: cors },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: server.url, 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of posts) {
      const refused = await postLink(url, { decision: 'approve' }, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(refused.text).toContain('own page only');
    }
    // A form is taken on the link's route only: elsewhere the content-type guard stands.
    const elsewhere = await fetch(`${server.url}/sessions/${view.id}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'type=user_approved_next_step',
    });
    expect(elsewhere.status).toBe(415);
    expect(await footprint(http, view.id)).toEqual(before);
  });

  it('escapes what the session holds: a step reason with markup is text on the page', async () => {
    const reason = '<script>alert(1)</script><img src=x onerror=alert(2)> "quoted" & \u202Egnp.exe';
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason, requiresApproval: true })] }]);
    const { http } = await serveWithLinks({ model });
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const view = (await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Go.' })).body.view as SessionView;
    expect(view.waitingReason).toBe('approve_step');
    const page = await getLink((await http.post(`/sessions/${id}/links`, { recipient: 'alice' })).body.url);
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &quot;quoted&quot; &amp; &lt;U+202E&gt;gnp.exe');
    expect(page.text).not.toContain('<script>');
    expect(page.text).not.toContain('<img');
  });

  it('makes links only when it can: links off, no open wait, another wait named, a reserved recipient, a token for someone else', async () => {
    const off = await serveWithLinks({ linkSecret: null });
    const waiting = await atApproval(off.http);
    const refused = await off.http.post(`/sessions/${waiting.id}/links`, { recipient: 'alice' });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ code: 'links_off', message: expect.stringMatching(/STEWARD_LINK_SECRET.*openssl rand -hex 32/) });
    const page = await getLink(`${off.server.url}/links/anything.here`);
    expect(page.status).toBe(404);
    expect(page.text).toContain('Links are off');

    const { http } = await serveWithLinks();
    const choosing: string = (await http.post('/sessions', {})).body.view.id; // skill_selection: the app's to decide
    expect((await http.post(`/sessions/${choosing}/links`, { recipient: 'alice' })).body.error.code).toBe('event_refused');
    const view = await atApproval(http);
    expect((await http.post(`/sessions/${view.id}/links`, { recipient: 'alice', wait: view.wait! + 1 })).body.error.code).toBe('wait_closed');
    expect((await http.post(`/sessions/${view.id}/links`, { recipient: 'Steward' })).status).toBe(400);
    expect((await http.post(`/sessions/${view.id}/links`, { recipient: 'echo' })).status).toBe(400);
    expect((await http.post(`/sessions/${view.id}/links`, { recipient: 'alice', expiresIn: '90d' })).body.error.message).toMatch(/expiresIn: .*30d/);
    expect((await http.post(`/sessions/s-none/links`, { recipient: 'alice' })).status).toBe(404);

    const named = await serveWithLinks({
      tokens: [
        { name: 'alice', token: 'alice-token-0123456789', actForOthers: false },
        { name: 'front', token: 'front-token-0123456789', actForOthers: true },
      ],
    });
    const alice = client(named.server.url, 'alice-token-0123456789');
    const at = await atApproval(alice);
    expect((await alice.post(`/sessions/${at.id}/links`, { recipient: 'bob' })).body.error).toMatchObject({
      code: 'by_not_allowed',
      message: expect.stringMatching(/links for "alice" only/),
    });
    expect((await alice.post(`/sessions/${at.id}/links`, { recipient: 'alice' })).status).toBe(201);
    expect((await client(named.server.url, 'front-token-0123456789').post(`/sessions/${at.id}/links`, { recipient: 'bob' })).status).toBe(201);
  });
});

describe('the link secret', () => {
  it('refuses a secret under 32 bytes, naming how to make one; reads it from the environment or a file, not both', async () => {
    const store = new MemoryStore();
    await expect(startServe({ runtime: createRuntime({ model: new DemoModel(), store }), store, port: 0, log: () => {}, linkSecret: 'short' })).rejects.toThrow(
      /5 bytes, too short.*32.*openssl rand -hex 32/,
    );
    expect(() => linkSecretFromEnv({ STEWARD_LINK_SECRET: 'x'.repeat(31) })).toThrow(UserError);
    expect(linkSecretFromEnv({})).toBeUndefined();
    expect(linkSecretFromEnv({ STEWARD_LINK_SECRET: ` ${SECRET} ` })).toBe(SECRET);
    const file = temp.path('secret');
    writeFileSync(file, `${SECRET}\n`);
    expect(linkSecretFromEnv({ STEWARD_LINK_SECRET_FILE: file })).toBe(SECRET);
    expect(linkSecretFromEnv({}, file)).toBe(SECRET);
    expect(() => linkSecretFromEnv({ STEWARD_LINK_SECRET: SECRET }, file)).toThrow(/both set/);
    expect(() => linkSecretFromEnv({}, temp.path('missing'))).toThrow(/--link-secret-file .* cannot be read \(ENOENT\)/);
    // Embedded, a link needs the URL the app mounts the routes at.
    const runtime = createRuntime({ model: new DemoModel(), store });
    expect(() => createServeApp({ runtime, store, auth: 'none', linkSecret: SECRET })).toThrow(/linkSecret needs publicUrl/);
  });
});
