/**
 * examples/slack-webhook: Steward's deliverer posts a session's wait to the relay, the relay
 * verifies it with `standardwebhooks` and posts `{ text, blocks }` to a fake incoming webhook
 * on 127.0.0.1 (no network); a repeat of the same webhook-id is not posted twice, a bad
 * signature is refused, and a failing Slack makes Steward try again later.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.js';
// @ts-expect-error the example is plain JavaScript, without declarations
import { startRelay } from '../../examples/slack-webhook/relay.mjs';
import { TEST_SECRET } from './receiver.js';
import { tinyDecidedBy } from '../support/decided-package.js';
import type { WebhookLinks } from '../../src/webhooks/links.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-slack-');

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function fakeSlack(status: () => number) {
  const posts: { text: string; blocks: { text: { text: string } }[] }[] = [];
  /** The status of every request the relay made, taken or not. */
  const answered: number[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const code = status();
      answered.push(code);
      if (code === 200) posts.push(JSON.parse(text));
      res.writeHead(code).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T/B/x`, posts, answered };
}

describe('examples/slack-webhook', () => {
  it('relays a verified wait to the incoming webhook once; Slack failing is retried by Steward', async () => {
    let slackStatus = 500;
    const slack = await fakeSlack(() => slackStatus);
    const relay = await startRelay({ secret: TEST_SECRET, slackUrl: slack.url });
    closers.push(relay.close);
    const store = new MemoryStore();
    const receivers = [{ url: relay.url, secret: TEST_SECRET, events: ['session.waiting' as const] }];
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which <coast>?' })] }]);
    const runtime = createRuntime({ model, store, webhooks: receivers });
    let now = 0;
    const deliverer = new WebhookDeliverer({ outbox: store.outbox, receivers, now: () => now, random: () => 0 });

    const session = await runtime.createSession({ packageId: 'tiny' });
    await deliverer.deliverDue();
    // Slack failed: the relay passed the message on, answered 502, and Steward keeps it for later.
    expect(slack.answered).toEqual([500]);
    expect(await store.outbox.counts()).toEqual({ pending: 1, dead: 0 });
    slackStatus = 200;
    now += 1;
    await deliverer.deliverDue();
    expect(slack.posts).toHaveLength(1);
    expect(slack.posts[0]!.text).toBe(`Session ${session.id} waits for you: intake`);

    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    await deliverer.deliverDue();
    expect(slack.posts).toHaveLength(2);
    // The model's words are data: Slack's control characters arrive escaped.
    expect(slack.posts[1]!.blocks.map((b) => b.text.text)).toEqual([`*Session ${session.id} waits for you: intake*`, 'Which &lt;coast&gt;?']);
    expect(await store.outbox.counts()).toEqual({ pending: 0, dead: 0 });
  });

  it('puts a button per decision link in the message of a wait whose worker names its deciders', async () => {
    const slack = await fakeSlack(() => 200);
    const relay = await startRelay({ secret: TEST_SECRET, slackUrl: slack.url });
    closers.push(relay.close);
    const packagesDir = tinyDecidedBy(temp.path('packages'), 'ops');
    const store = new MemoryStore();
    const receivers = [{ url: relay.url, secret: TEST_SECRET, events: ['session.waiting' as const] }];
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval: true })] },
    ]);
    // An app's own links: who may decide (the ops group's people) and where they decide.
    const webhookLinks: WebhookLinks = ({ sessionId, wait, deciders }) =>
      deciders?.includes('ops')
        ? ['olga', 'omar'].map((recipient) => ({
            recipient,
            url: `https://steward.example/links/${sessionId}-${wait}-${recipient}`,
            expiresAt: '2026-12-07T00:00:00.000Z',
          }))
        : [];
    const runtime = createRuntime({ model, store, packagesDir, webhooks: receivers, webhookLinks });
    const deliverer = new WebhookDeliverer({ outbox: store.outbox, receivers });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    await deliverer.deliverDue();
    const wait = session.view().wait;
    expect(slack.posts.map((p) => p.text)).toEqual([`Session ${session.id} waits for you: intake`, `Session ${session.id} waits for you: approve_step`]);
    // The intake names no deciders: no buttons; the step's approval has one per person.
    expect(slack.posts[0]!.blocks.some((b) => (b as { type?: string }).type === 'actions')).toBe(false);
    expect(slack.posts[1]!.blocks.at(-1)).toEqual({
      type: 'actions',
      elements: ['olga', 'omar'].map((who) => ({
        type: 'button',
        text: { type: 'plain_text', text: `Decide as ${who}` },
        url: `https://steward.example/links/${session.id}-${wait}-${who}`,
      })),
    });
  });

  it('refuses a bad signature and posts a repeated webhook-id once', async () => {
    const slack = await fakeSlack(() => 200);
    const relay = await startRelay({ secret: TEST_SECRET, slackUrl: slack.url });
    closers.push(relay.close);
    const { Webhook } = await import('standardwebhooks');
    const body = JSON.stringify({
      type: 'session.done',
      timestamp: new Date().toISOString(),
      data: { sessionId: 's1', event: { type: 'done', summary: 'Done.' }, wait: null, view: {} },
    });
    const post = (signature: string) =>
      fetch(relay.url, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': signature },
        body,
      });
    expect((await post('v1,AAAA')).status).toBe(401);
    const signature = new Webhook(TEST_SECRET).sign('msg_1', new Date(), body);
    expect((await post(signature)).status).toBe(204);
    expect((await post(signature)).status).toBe(204);
    expect(slack.posts.map((p) => p.text)).toEqual(['Session s1 is done']);
  });
});
