/**
 * A webhook receiver for `steward serve --webhook`: it checks each message's signature with
 * the `standardwebhooks` library, drops repeats by their `webhook-id` (delivery is at least
 * once), and posts a Slack-style message (`{ text, blocks }`) to an incoming-webhook URL.
 *
 *   STEWARD_WEBHOOK_SECRET=whsec_… SLACK_WEBHOOK_URL=https://hooks.slack.com/services/… PORT=4900 node relay.mjs
 *   steward serve --webhook http://127.0.0.1:4900/steward --webhook-events waiting,done
 *
 * It answers 204 once Slack took the message, 401 to a bad signature (never retried into
 * success), and 502 when Slack failed: Steward then tries again later, with the same id.
 * What a session says is data: Slack's control characters (&, <, >) are escaped.
 */
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';

const MAX_BODY = 256 * 1024;
/** Buttons in one message, at most (one per person who may decide). */
const MAX_BUTTONS = 5;
/** How many webhook ids are remembered for dropping repeats. */
const REMEMBERED = 10_000;

/** Text for Slack's mrkdwn: its three control characters escaped, and clipped. */
const slackText = (text, max = 2900) => {
  const clipped = text.length > max ? `${text.slice(0, max)}…` : text;
  return clipped.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
};

/** The Slack message for a Steward webhook body ({ type, timestamp, data: { sessionId, event, wait, view, links? } }). */
export function slackMessage(body) {
  const { sessionId, event, wait, view } = body.data;
  const what =
    body.type === 'session.waiting'
      ? `waits for you: ${wait?.waitingReason ?? event.reason}`
      : body.type === 'session.answered'
        ? `was answered (${event.eventType}${event.by ? ` by ${event.by}` : ''})`
        : body.type === 'session.done'
          ? 'is done'
          : body.type === 'session.expired'
            ? `: nobody decided ${event.reason} in time, so it was rejected`
            : body.type === 'session.escalated'
              ? `: ${event.reason} went to ${event.to} (nobody decided within ${event.after})`
              : body.type === 'session.reminded'
                ? `still waits for you: ${event.reason}`
                : body.type === 'session.failed'
                  ? `: a model call failed (${event.error ?? 'no reason given'}); it waits for you`
                  : body.type;
  const text = `Session ${sessionId}${what.startsWith(':') ? '' : ' '}${what}`;
  const detail = wait?.message ?? wait?.pendingStep?.reason ?? view?.message ?? event.summary ?? '';
  const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: `*${slackText(text, 300)}*` } }];
  if (typeof detail === 'string' && detail) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: slackText(detail) } });
  // A decision link per person the wait names (Steward makes them for a wait with deciders): a button each, which opens
  // the link's page, where that person approves or rejects.
  const links = Array.isArray(body.data.links) ? body.data.links.slice(0, MAX_BUTTONS) : [];
  if (links.length) {
    blocks.push({
      type: 'actions',
      elements: links.map((link) => ({
        type: 'button',
        text: { type: 'plain_text', text: `Decide as ${String(link.recipient).slice(0, 60)}` },
        url: String(link.url),
      })),
    });
  }
  return { text: slackText(text, 300), blocks };
}

/**
 * Starts the relay; resolves with its URL and a close function.
 *
 * @example
 * const relay = await startRelay({ secret: process.env.STEWARD_WEBHOOK_SECRET, slackUrl: process.env.SLACK_WEBHOOK_URL, port: 4900 });
 */
export async function startRelay({ secret, slackUrl, port = 0, host = '127.0.0.1' }) {
  const verifier = new Webhook(secret);
  const seen = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', async () => {
      const payload = Buffer.concat(chunks).toString('utf8');
      let body;
      try {
        body = verifier.verify(payload, req.headers);
      } catch {
        res.writeHead(401).end();
        return;
      }
      const id = req.headers['webhook-id'];
      if (seen.has(id)) {
        res.writeHead(204).end();
        return;
      }
      try {
        const slack = await fetch(slackUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(slackMessage(body)) });
        await slack.body?.cancel();
        if (!slack.ok) throw new Error(`Slack answered ${slack.status}`);
      } catch {
        res.writeHead(502).end();
        return;
      }
      seen.add(id);
      if (seen.size > REMEMBERED) seen.delete(seen.values().next().value);
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  return {
    url: `http://${host}:${server.address().port}/steward`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { STEWARD_WEBHOOK_SECRET: secret, SLACK_WEBHOOK_URL: slackUrl, PORT: port = '4900' } = process.env;
  if (!secret || !slackUrl) {
    console.error('Set STEWARD_WEBHOOK_SECRET (whsec_…, the one steward serve signs with) and SLACK_WEBHOOK_URL (an incoming webhook).');
    process.exit(1);
  }
  const relay = await startRelay({ secret, slackUrl, port: Number(port) });
  console.log(`Relaying Steward webhooks from ${relay.url} to Slack.`);
}
