/**
 * The inspector shows a live session's rounds and tool checks as they happen, and what its
 * model writes as it streams: the server's SSE stream carries them as `progress` messages,
 * and the page shows the latest round and tool line, the text and the draft (in Debian's
 * chromium, as the other page tests).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, type Model } from '../../src/index.js';
import { ScriptedModel } from '../../src/testing.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { ManualModel } from '../../src/models/manual-model.js';
import { SessionStreamEventSchema, type SessionStreamEvent } from '../../src/core/machines/stream-events.js';
import { buildPage } from './page-build.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const noBrowser = chromiumMissing('live progress page');

const cleanups: (() => Promise<void> | void)[] = [];
let pageDir = '';
beforeAll(async () => {
  pageDir = await buildPage();
}, 90_000);
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function setup(model: Model) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model, store });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const inspector: InspectorHandle = await startInspector({
    runtime,
    store,
    port: 0,
    layoutsDir: runLayoutsDir(),
    sessionId: session.id,
    pageDir,
    log: () => {},
  });
  cleanups.push(() => inspector.close());
  cleanups.push(() => session.stop());
  return { session, inspector, base: new URL(inspector.url).origin };
}

/** The `progress` messages of the SSE stream, parsed and checked against the schema. */
function progressOf(raw: string): SessionStreamEvent[] {
  return [...raw.matchAll(/event: progress\ndata: (.*)\n\n/g)].map((m) => SessionStreamEventSchema.parse(JSON.parse(m[1]!)));
}

describe('live progress in the inspector', () => {
  it('the SSE stream forwards the live session events as `progress`, text deltas included but not the raw tool-call pieces', async () => {
    const model = new ScriptedModel([
      (request) => {
        request.onTextDelta?.('Ask');
        request.onTextDelta?.('ing.');
        request.onToolCallDelta?.({ index: 0, id: 'c1', name: 'ask_user', arguments: '{"message":"Which tea?"}' });
        return {
          content: 'Asking.',
          toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ask_user', arguments: JSON.stringify({ message: 'Which tea?' }) } }],
          usage: { promptTokens: 7, completionTokens: 3 },
        };
      },
    ]);
    const { session, inspector, base } = await setup(model);
    const res = await fetch(`${base}/api/stream?token=${inspector.token}&session=${session.id}`);
    const reader = res.body!.getReader();
    let raw = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        raw += new TextDecoder().decode(value);
      }
    })();
    // The hub follows the live session on its next poll.
    await expect.poll(() => session.listenerCount, { timeout: 5_000 }).toBe(1);
    const sent = await fetch(`${base}/api/sessions/${session.id}/events`, {
      method: 'POST',
      headers: { 'x-steward-token': inspector.token, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'user_submitted_input', text: 'Tea.' }),
    });
    expect(sent.status).toBe(200);
    await expect
      .poll(() =>
        progressOf(raw)
          .map((e) => e.type)
          .at(-1),
      )
      .toBe('waiting');
    const events = progressOf(raw);
    expect(events.find((e) => e.type === 'round_finished')).toMatchObject({
      agent: 'manager',
      toolCalls: ['ask_user'],
      usage: { promptTokens: 7, completionTokens: 3 },
    });
    expect(events.find((e) => e.type === 'tool_call_checked')).toMatchObject({ tool: 'ask_user', accepted: true });
    expect(events.filter((e) => e.type === 'text_delta').map((e) => e.text)).toEqual(['Ask', 'ing.']);
    expect(events.some((e) => e.type === 'tool_call_delta')).toBe(false);
    await reader.cancel();
    await reading.catch(() => {});
    // The page left: the hub lets go of the session.
    await expect.poll(() => session.listenerCount, { timeout: 5_000 }).toBe(0);
  });

  describe.skipIf(noBrowser)('the page', () => {
    beforeAll(async () => {
      await workerPages().ready();
    }, 60_000);

    it('shows the latest round with its time and tools, and the latest tool check, as text', async () => {
      const model = new ManualModel();
      const { inspector, session } = await setup(model);
      const page = await workerPages().take({ width: 1600, height: 1000 });
      cleanups.push(() => workerPages().release(page));
      await page.goto(inspector.url);
      await page.waitForSelector('#diagram-svg .state.active-leaf[data-path="waiting_user.intake"]', { timeout: 15_000 });
      await expect.poll(() => session.listenerCount, { timeout: 5_000 }).toBe(1);
      expect(await page.isHidden('#live-progress')).toBe(true);

      const sent = session.send({ type: 'user_submitted_input', text: 'Tea.' });
      await expect.poll(() => page.textContent('#live-progress')).toContain('manager · burst 1/12 · calling the model…');
      const [pending] = model.pending();
      model.reply(pending!.id, {
        toolCalls: [
          { name: '<b>bold</b>_tool', arguments: {} },
          { name: 'ask_user', arguments: { message: 'Which tea?' } },
        ],
      });
      await sent;
      await expect.poll(() => page.textContent('#live-progress .progress-round')).toMatch(/^manager · burst 1\/12 · \d+ ms → <b>bold<\/b>_tool, ask_user$/);
      expect(await page.textContent('#live-progress .progress-tool')).toBe('✓ ask_user');
      expect(await page.locator('#live-progress b').count()).toBe(0);
    });

    it("shows the manager's text and the worker's draft as they stream, as text, and clears them at the wait", async () => {
      let releaseManager!: () => void;
      let releaseWorker!: () => void;
      const managerGate = new Promise<void>((resolve) => (releaseManager = resolve));
      const workerGate = new Promise<void>((resolve) => (releaseWorker = resolve));
      const submit = '{"outputs": {"note": "<b>Tea</b> for\\ntwo"}}';
      const model = new ScriptedModel([
        async (request) => {
          request.onTextDelta?.('I will ask <i>echo</i>.');
          await managerGate;
          const args = JSON.stringify({ workerId: 'echo', reason: 'go', requiresApproval: false });
          return { content: 'I will ask <i>echo</i>.', toolCalls: [{ id: 'm1', type: 'function', function: { name: 'run_worker', arguments: args } }] };
        },
        async (request) => {
          request.onToolCallDelta?.({ index: 0, id: 'w1', name: 'submit', arguments: submit.slice(0, 36) });
          await workerGate;
          request.onToolCallDelta?.({ index: 0, arguments: submit.slice(36) });
          return { content: null, toolCalls: [{ id: 'w1', type: 'function', function: { name: 'submit', arguments: submit } }] };
        },
      ]);
      const { inspector, session } = await setup(model);
      const page = await workerPages().take({ width: 1600, height: 1000 });
      cleanups.push(() => workerPages().release(page));
      await page.goto(inspector.url);
      await page.waitForSelector('#diagram-svg .state.active-leaf[data-path="waiting_user.intake"]', { timeout: 15_000 });
      await expect.poll(() => session.listenerCount, { timeout: 5_000 }).toBe(1);
      expect(await page.isHidden('#live-draft')).toBe(true);

      const sent = session.send({ type: 'user_submitted_input', text: 'Tea.' });
      await expect.poll(() => page.textContent('#live-draft .live-text')).toBe('manager: I will ask <i>echo</i>.');
      releaseManager();
      await expect.poll(() => page.textContent('#live-draft .live-tag[data-tag="note"] pre')).toBe('<b>Tea</b> for');
      expect(await page.textContent('#live-draft .live-tag b')).toBe('draft · note · 14 characters');
      expect(await page.locator('#live-draft pre b, #live-draft pre i, #live-draft .live-text i').count()).toBe(0);
      releaseWorker();
      await sent;
      await expect.poll(() => page.isHidden('#live-draft')).toBe(true);
      expect(session.view().artifact?.tags[0]?.body).toBe('<b>Tea</b> for\ntwo');
    });
  });
});
