// An app of its own (hono) that serves Steward's HTTP API beside its routes: `/` is the
// app's, `/steward/…` is Steward's (sessions, events, the live stream, OpenAPI). The app
// authenticates its users itself — here a made-up API key per user — and tells Steward who
// called, so the journal records that user as `by`.
// `npm start` serves on http://127.0.0.1:8787; `npm run check` serves on a free port, drives
// one session as a browser page would (async send, a stream ticket, the live events), and exits.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createRuntime, MemoryStore } from 'steward';
import { createServeApp } from 'steward/serve';
import { DemoModel } from 'steward/testing';

const users = new Map([['key-of-alice-0123456789', 'alice']]);

const store = new MemoryStore();
const runtime = createRuntime({ model: new DemoModel(), store });
const steward = createServeApp({
  runtime,
  store,
  auth: {
    authenticate: (c) => {
      const name = users.get(c.req.header('x-api-key') ?? '');
      return name ? { name, named: true, actForOthers: false } : undefined;
    },
  },
  corsOrigins: ['http://localhost:5173'],
});

const app = new Hono();
app.get('/', (c) => c.text('My app. Steward is under /steward (see /steward/openapi.json).'));
app.route('/steward', steward.app);

const check = process.argv.includes('--check');
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: check ? 0 : 8787 }, async ({ port }) => {
  const base = `http://127.0.0.1:${port}/steward`;
  if (!check) return console.log(`Serving on http://127.0.0.1:${port} (Steward under ${base})`);
  const headers = { 'x-api-key': 'key-of-alice-0123456789', 'content-type': 'application/json' };
  const post = (path, body, extra = {}) => fetch(`${base}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });

  const { view } = await (await post('/sessions', { packageId: 'tiny' })).json();
  const sent = await post(`/sessions/${view.id}/events`, { type: 'user_submitted_input', text: 'A note about otters.' }, { prefer: 'respond-async' });
  console.log(`send: ${sent.status} ${JSON.stringify(await sent.json())}`);
  // What an EventSource would open: the ticket stands in for the API key in the URL.
  const { ticket } = await (await post(`/sessions/${view.id}/stream-tickets`, {})).json();
  const stream = await fetch(`${base}/sessions/${view.id}/stream?ticket=${encodeURIComponent(ticket)}`);
  const reader = stream.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (let waiting = false; !waiting;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let end; (end = buffer.indexOf('\n\n')) >= 0; buffer = buffer.slice(end + 2)) {
      const message = buffer.slice(0, end);
      const data = message.match(/^data: (.*)$/m)?.[1];
      if (!message.includes('event: session') || !data) continue;
      const event = JSON.parse(data);
      if (event.type !== 'state_entered') console.log(`live: ${event.type}`);
      waiting ||= event.type === 'waiting';
    }
  }
  await reader.cancel();
  const journal = await (await fetch(`${base}/sessions/${view.id}/journal`, { headers })).json();
  console.log(`by: ${journal.entries.find((e) => e.kind === 'event').payload.by}`);
  await steward.close();
  server.close();
});
