/**
 * People and their waits, end to end, on PostgreSQL with two servers (in this process, one
 * database, one clock the test moves): olga (group ops) asks for a note; its step waits for
 * the ops group, and a signed webhook tells the receiver with a decision link for olga. Nobody
 * decides within the hour: the deadline fires once — on one server of the two scanning — and
 * escalates the wait to the group leads, as a new wait; the webhooks say so, with a link for
 * lena (leads). olga's old link now changes nothing; lena approves through hers on the other
 * server, and the session goes on. The audit export has olga's request, the deadline's
 * escalation by steward, and lena's approval through her link, with the groups each decided as.
 * And a process whose copy of the session is behind the store fires nothing a server fired.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { NamedToken } from '../../src/http/tokens.js';
import { DecisionLinks } from '../../src/http/decision-links.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { decisionLinkFn } from '../../src/serve/decision-link.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { webhookLinksFor } from '../../src/serve/webhook-links.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { useTempDir } from '../support/temp.js';
import { tinyDecidedBy } from '../support/decided-package.js';
import { fakeClock } from '../support/fake-clock.js';
import { startReceiver, TEST_SECRET, type Received } from '../webhooks/receiver.js';
import { client } from './http.js';

const pg = usePostgres();
const temp = useTempDir('steward-people-');
const LINK_SECRET = 'e'.repeat(32) + '0123456789abcdef0123456789abcdef';
const HOUR = 3_600_000;
const TOKENS: NamedToken[] = [
  { name: 'olga', token: 'olga-token-0123456789abcdef', actForOthers: false, groups: ['ops'] },
  { name: 'lena', token: 'lena-token-0123456789abcdef', actForOthers: false, groups: ['leads'] },
];
const tokenOf = (name: string) => TOKENS.find((t) => t.name === name)!.token;

let packagesDir = '';
beforeAll(() => {
  // The tiny package, its worker's steps approved by the ops group.
  packagesDir = tinyDecidedBy(temp.path('packages'), 'ops');
});

const linkOf = (message: Received | undefined, recipient: string) =>
  (message?.body.data.links as { recipient: string; url: string }[] | undefined)?.find((l) => l.recipient === recipient)?.url;

describe.skipIf(postgresUnavailable !== null)('people and their waits, end to end', () => {
  it('webhook with a link, one expiry escalated to a second group, approved through its link on another server, all in the audit', async () => {
    const db = await pg.createDatabase();
    const clock = fakeClock();
    const receiver = await startReceiver();
    const servers: ServeHandle[] = [];
    const stores: PostgresStore[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const store = new PostgresStore(db);
        stores.push(store);
        // Its links point at this server: each message's links are made where its event happened.
        let here = '';
        const runtime = createRuntime({
          model: new DemoModel(),
          store,
          packagesDir,
          clock,
          deadlines: { approve_step: { after: '1h', outcome: 'escalate', to: 'leads', then: { after: '1h', outcome: 'reject' } } },
          webhooks: [{ url: receiver.url, secret: TEST_SECRET }],
          webhookLinks: webhookLinksFor(
            decisionLinkFn(new DecisionLinks(LINK_SECRET), () => here),
            TOKENS,
            clock.now,
          ),
        });
        const server = await startServe({ runtime, store, port: 0, log: () => {}, tokens: TOKENS, linkSecret: LINK_SECRET });
        here = server.url;
        servers.push(server);
      }
      const [a, b] = servers as [ServeHandle, ServeHandle];
      const olga = client(a.url, tokenOf('olga'));

      // olga asks; the step waits for ops, and the receiver hears of it with olga's link (and none for lena, who is not in ops).
      const created = await olga.post('/sessions', { packageId: 'tiny', participants: ['group:leads'] });
      const id: string = created.body.view.id;
      const asked = await olga.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A short note.' });
      expect(asked.body.view).toMatchObject({ waitingReason: 'approve_step', deciders: ['ops'], deadline: { level: 0, outcome: 'escalate', to: 'leads' } });
      const first: number = asked.body.view.wait;
      expect(asked.body.view.deadline.dueAt).toBe(new Date(clock.now() + HOUR).toISOString());
      const waitingFor = (wait: number) =>
        receiver.received.find((r) => r.body.type === 'session.waiting' && (r.body.data.event as { wait?: number }).wait === wait);
      await until(() => waitingFor(first) !== undefined);
      const olgasLink = linkOf(waitingFor(first), 'olga')!;
      expect(olgasLink).toMatch(new RegExp(`^${a.url}/links/`));
      expect(linkOf(waitingFor(first), 'lena')).toBeUndefined();
      expect(waitingFor(first)!.verified).toBe(true);

      // Nobody decides within the hour. Both servers scan at once: exactly one fires it.
      expect([...(await a.host.fireDueDeadlines()), ...(await b.host.fireDueDeadlines())]).toEqual([]);
      await clock.advance(HOUR);
      const fired = (await Promise.all([b.host.fireDueDeadlines(), a.host.fireDueDeadlines()])).flat();
      expect(fired).toEqual([id]);
      expect([...(await a.host.fireDueDeadlines()), ...(await b.host.fireDueDeadlines())]).toEqual([]);
      const escalatedView = (await olga.get(`/sessions/${id}`)).body.view;
      expect(escalatedView).toMatchObject({ waitingReason: 'approve_step', wait: first + 1, deciders: ['leads'], deadline: { level: 1, outcome: 'reject' } });
      const journal = (await stores[0]!.journal(id)).filter((e) => e.type === 'deadline_passed');
      expect(journal.map((e) => e.payload)).toMatchObject([{ wait: first, level: 0, by: 'steward', through: 'deadline' }]);

      // The webhooks: escalated, then the new wait with lena's link (made on the server that fired it).
      await until(() => waitingFor(first + 1) !== undefined && receiver.received.some((r) => r.body.type === 'session.escalated'));
      expect(receiver.received.find((r) => r.body.type === 'session.escalated')!.body.data.event).toMatchObject({
        outcome: 'escalate',
        to: 'leads',
        wait: first,
      });
      const lenasLink = linkOf(waitingFor(first + 1), 'lena')!;
      expect(lenasLink).toBeDefined();
      expect(linkOf(waitingFor(first + 1), 'olga')).toBeUndefined();

      // olga's link was for the wait that was escalated away: it changes nothing now.
      const late = await fetch(olgasLink, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
      expect(late.status).toBe(409);
      expect((await olga.get(`/sessions/${id}`)).body.view).toMatchObject({ waitingReason: 'approve_step', wait: first + 1 });

      // lena approves through her link, on the other server than the one that made it.
      const maker = lenasLink.startsWith(`${a.url}/`) ? a : b;
      const other = maker === a ? b : a;
      const onOther = lenasLink.replace(/^http:\/\/127\.0\.0\.1:\d+/, other.url);
      const approve = () => fetch(onOther, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
      // The server that fired the deadline may hold the session's lease a moment after it waits
      // again (the webhook can come first): the answer is then a 409 with Retry-After, and a
      // person's browser (or any client) tries again.
      let approved = await approve();
      for (let tries = 0; approved.status === 409 && approved.headers.get('retry-after') !== null && tries < 100; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        approved = await approve();
      }
      expect(approved.status).toBe(200);
      const decided = (await approved.json()) as { by: string; via: string };
      expect(decided).toMatchObject({ decided: 'approve', by: 'lena', wait: first + 1 });
      await until(async () => (await olga.get(`/sessions/${id}`)).body.view.waitingReason === 'review_artifact');

      // The audit: olga's request, the deadline's escalation, lena's approval through her link.
      const audit = await fetch(`${b.url}/sessions/${id}/audit`, { headers: { authorization: `Bearer ${tokenOf('olga')}` } });
      const rows = (await audit.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(rows.map((r) => [r.by, r.decision, r.through])).toEqual([
        ['olga', 'submitted', 'rest'],
        ['steward', 'escalated', 'deadline'],
        ['lena', 'approved', 'link'],
      ]);
      expect(rows[1]).toMatchObject({ wait: first, details: { level: 0, after: '1h', to: 'leads' } });
      expect(rows[2]).toMatchObject({ wait: first + 1, via: decided.via, groups: ['leads'] });
      expect(rows[0]).toMatchObject({ groups: ['ops'] });

      // The wait after it has a deadline of its own only if its reason has one: none here, so nothing more fires.
      await clock.advance(10 * HOUR);
      expect([...(await a.host.fireDueDeadlines()), ...(await b.host.fireDueDeadlines())]).toEqual([]);
      expect((await stores[0]!.journal(id)).filter((e) => e.type === 'deadline_passed')).toHaveLength(1);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await Promise.all(stores.map((s) => s.close()));
      await receiver.close();
    }
  });

  it('a process that still holds an old copy of the session (its timer armed) does not fire a deadline a server fired already', async () => {
    const db = await pg.createDatabase();
    const deadlines = { approve_step: { after: '1h', outcome: 'reject' as const } };
    // Two clocks: the test decides which process sees the hour pass first.
    const runClock = fakeClock();
    const serverClock = fakeClock();
    const runStore = new PostgresStore(db);
    const serverStore = new PostgresStore(db);
    const runner = createRuntime({ model: new DemoModel(), store: runStore, packagesDir, clock: runClock, deadlines });
    const server = await startServe({
      runtime: createRuntime({ model: new DemoModel(), store: serverStore, packagesDir, clock: serverClock, deadlines }),
      store: serverStore,
      port: 0,
      log: () => {},
    });
    try {
      // `steward run`, say: the session stays loaded here while it waits, its deadline's timer armed.
      const session = await runner.createSession({ packageId: 'tiny' });
      await session.send({ type: 'user_submitted_input', text: 'A short note.', groups: ['ops'] });
      expect(session.view()).toMatchObject({ waitingReason: 'approve_step', deadline: { outcome: 'reject' } });
      expect(runClock.pending).toBe(1);

      const due = (await runStore.load(session.id))!.deadline!;
      // The runner lets its lease go once the run has settled at the wait, which may come a moment
      // after the send resolved: until then the server finds the session leased and fires nothing.
      await until(async () => (await runStore.leases.holder(session.id)) === null);
      await serverClock.advance(HOUR);
      expect(await server.host.fireDueDeadlines()).toEqual([session.id]);
      // The runner's timer comes due too: its copy is behind the store, so it sends nothing. (A second
      // try queues behind the timer's, so its answer comes once the timer's attempt has ended.)
      await runClock.advance(HOUR);
      const again = await session.passDeadline(due);
      // Refused: the server may still run what the rejection started (its lease), or be done with it (a newer revision).
      expect(again?.ok).toBe(false);
      expect(['conflict', 'session_running_elsewhere']).toContain(again?.ok === false ? again.error.code : '');
      const fired = (await serverStore.journal(session.id)).filter((e) => e.type === 'deadline_passed');
      expect(fired).toHaveLength(1);
      expect(session.view().waitingReason).toBe('approve_step');
      await session.close();
    } finally {
      await server.close();
      await runStore.close();
      await serverStore.close();
    }
  });
});

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
