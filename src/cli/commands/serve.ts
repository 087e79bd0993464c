/**
 * `steward serve`: the HTTP API (src/serve) on the store of --db / STEWARD_DB, until
 * SIGINT or SIGTERM; then a graceful shutdown (sends under way get --grace-ms to settle,
 * the rest stay saved and resume elsewhere). STEWARD_TOKEN is the bearer token; it is
 * required on any address but loopback.
 */
import type { Command } from 'commander';
import { printableLocation } from '../../store/open-store.js';
import {
  DEFAULT_GRACE_MS,
  DEFAULT_KEEP_LOADED,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_CREATES_PER_MINUTE,
  DEFAULT_MAX_REPLAY_MB,
  DEFAULT_MAX_STREAMS_PER_CALLER,
  DEFAULT_SERVE_PORT,
} from '../../serve/defaults.js';
import { tokensFromEnv } from '../../http/tokens.js';
import { linkSecretFromEnv } from '../../http/decision-links.js';
import { CliError, openContext, wholeNumber } from '../context.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEventFilter, WEBHOOK_EVENT_TYPES } from '../../webhooks/events.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, receiverUrlsIn, receiversFromOptions, type WebhookReceiver } from '../../webhooks/receivers.js';
import type { CliIo } from '../io.js';
import { untilStopSignal } from '../signals.js';

/**
 * The receivers of `--webhook`, else the `URL whsec_…` lines of the secrets (a file, else
 * STEWARD_WEBHOOK_SECRET), with their secret and `--webhook-events`.
 */
function webhookReceivers(flags: ServeFlags, { env, cwd }: CliIo): WebhookReceiver[] {
  let secrets: { text: string; source: string } | undefined;
  if (flags.webhookSecretFile !== undefined) {
    try {
      secrets = { text: readFileSync(resolve(cwd, flags.webhookSecretFile), 'utf8'), source: `--webhook-secret-file ${flags.webhookSecretFile}` };
    } catch (error) {
      throw new CliError('usage', `Cannot read --webhook-secret-file ${flags.webhookSecretFile}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
    }
  } else if (env.STEWARD_WEBHOOK_SECRET) secrets = { text: env.STEWARD_WEBHOOK_SECRET, source: 'STEWARD_WEBHOOK_SECRET' };
  const urls = flags.webhook.length ? flags.webhook : secrets ? receiverUrlsIn(secrets.text, secrets.source) : [];
  if (!urls.length) {
    if (flags.webhookEvents !== undefined || flags.webhookSecretFile !== undefined)
      throw new CliError(
        'usage',
        '--webhook-events and --webhook-secret-file need a receiver: a line "URL whsec_…" in the secret file (kept out of the process list), or --webhook URL.',
      );
    return [];
  }
  return receiversFromOptions({
    urls,
    ...(flags.webhookEvents !== undefined ? { events: parseEventFilter(flags.webhookEvents) } : {}),
    ...(secrets ? { secrets } : {}),
  });
}

interface ServeFlags {
  host: string;
  port: number;
  graceMs: number;
  leaseMs: number;
  allowHost: string[];
  corsOrigin: string[];
  maxCreatesPerMinute: number;
  maxRunning: number;
  keepLoaded: number;
  publicUrl?: string;
  maxStreamsPerCaller: number;
  maxReplayMb: number;
  linkSecretFile?: string;
  webhook: string[];
  webhookEvents?: string;
  webhookSecretFile?: string;
  webhookTimeoutMs: number;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function register(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description(
      'serve the sessions over HTTP (JSON API, OpenAPI at /openapi.json); bearer tokens: ' +
        'STEWARD_TOKENS_FILE or STEWARD_TOKENS (named: "name token [act-for-others]" per line), or ' +
        'STEWARD_TOKEN (one shared)',
    )
    .option('--host <address>', 'the address to listen on (anything but loopback needs a token)', '127.0.0.1')
    .option('--port <n>', `the port (0: any free port)`, wholeNumber(0, 65535), DEFAULT_SERVE_PORT)
    .option('--grace-ms <n>', 'on shutdown, how long sends under way may take to settle', wholeNumber(0), DEFAULT_GRACE_MS)
    .option(
      '--allow-host <name>',
      "a Host name clients reach the server by besides its address (a proxy's, a DNS name; repeatable): any other Host gets 403",
      collect,
      [],
    )
    .option(
      '--cors-origin <origin>',
      'an origin (scheme://host[:port]) whose web pages may call the API from a browser (CORS; repeatable); any other origin gets 403',
      collect,
      [],
    )
    .option(
      '--public-url <url>',
      "the URL clients reach the server at (a proxy's or DNS name, with its path prefix if any), named by the A2A agent cards; default: the listening address",
    )
    .option(
      '--link-secret-file <path>',
      'a file holding the secret that signs decision links (at least 32 bytes, e.g. `openssl rand -hex 32`); or STEWARD_LINK_SECRET / STEWARD_LINK_SECRET_FILE. Without one, links are off',
    )
    .option(
      '--lease-ms <n>',
      "PostgreSQL: how long a lease on a running session lasts unrenewed; a dead server's sessions are taken over after it",
      wholeNumber(100),
      DEFAULT_LEASE_MS,
    )
    .option(
      '--max-creates-per-minute <n>',
      'sessions one caller (one token) may create per minute, by any route (POST /sessions, forks, new AG-UI threads and A2A contexts); beyond it 429 with Retry-After (0: no limit)',
      wholeNumber(0),
      DEFAULT_MAX_CREATES_PER_MINUTE,
    )
    .option(
      '--max-streams-per-caller <n>',
      'streams one caller (one token) may hold open at once: session streams, AG-UI runs, A2A streams; beyond it 429 (0: no limit)',
      wholeNumber(0),
      DEFAULT_MAX_STREAMS_PER_CALLER,
    )
    .option(
      '--max-replay-mb <n>',
      "megabytes of live events kept for streams that open late or reconnect, all sessions together (the least recently used session's go first)",
      wholeNumber(1, 1_000_000),
      DEFAULT_MAX_REPLAY_MB,
    )
    .option(
      '--max-running <n>',
      'sessions this server runs at once; a send for one more answers 429 with Retry-After instead of queueing (0: no limit)',
      wholeNumber(0),
      0,
    )
    .option(
      '--keep-loaded <n>',
      `PostgreSQL: sessions kept loaded while they wait for a person; the next send to one skips the statement that leases and loads it (0: none)`,
      wholeNumber(0),
      DEFAULT_KEEP_LOADED,
    )
    .option(
      '--webhook <url>',
      'POST a signed message (Standard Webhooks) to this URL when a session starts waiting, is answered or is done (repeatable); ' +
        'the secret: STEWARD_WEBHOOK_SECRET or --webhook-secret-file. A URL on the command line is in the process list: ' +
        "a chat service's secret URL belongs in the secret file instead",
      collect,
      [],
    )
    .option(
      '--webhook-events <list>',
      `only these events, comma-separated (${WEBHOOK_EVENT_TYPES.map((t) => t.slice('session.'.length)).join(', ')}); default: all`,
    )
    .option(
      '--webhook-secret-file <path>',
      'the webhooks\' secrets: a line "whsec_…" for every receiver, or "URL whsec_…" for one; without --webhook, its URL lines are the receivers',
    )
    .option(
      '--webhook-timeout-ms <n>',
      'how long a webhook receiver has to answer; a message a dead server was sending goes out again about twice that later',
      wholeNumber(1, 600_000),
      DEFAULT_REQUEST_TIMEOUT_MS,
    )
    .action(async (flags: ServeFlags, command: Command) => {
      // Loaded here: the other commands never pay for the HTTP stack.
      const { startServe } = await import('../../serve/server.js');
      const { webhookLinksFor } = await import('../../serve/webhook-links.js');
      const { decisionLinkFn } = await import('../../serve/decision-link.js');
      const { DecisionLinks } = await import('../../http/decision-links.js');
      // Before the store opens: a bad token list ends here, naming its line.
      const tokens = tokensFromEnv(io.env);
      const linkSecret = linkSecretFromEnv(io.env, flags.linkSecretFile, io.cwd);
      const webhooks = webhookReceivers(flags, io);
      // The links in webhook messages point at where people reach this server: known once it listens, unless --public-url says.
      let listeningAt: string | undefined;
      const webhookLinks =
        linkSecret !== undefined && tokens.kind === 'named'
          ? webhookLinksFor(
              decisionLinkFn(new DecisionLinks(linkSecret), () => flags.publicUrl ?? listeningAt),
              tokens.tokens,
            )
          : undefined;
      const ctx = await openContext(command.optsWithGlobals(), io, { command: 'serve', webhooks, ...(webhookLinks ? { webhookLinks } : {}) });
      try {
        const server = await startServe({
          runtime: ctx.runtime,
          store: ctx.store,
          host: flags.host,
          port: flags.port,
          graceMs: flags.graceMs,
          leaseMs: flags.leaseMs,
          maxCreatesPerMinute: flags.maxCreatesPerMinute,
          maxRunning: flags.maxRunning,
          keepLoaded: flags.keepLoaded,
          maxStreamsPerCaller: flags.maxStreamsPerCaller,
          maxReplayBytes: flags.maxReplayMb * 1_000_000,
          storeLabel: printableLocation(ctx.dbPath),
          allowedHosts: flags.allowHost,
          corsOrigins: flags.corsOrigin,
          webhookTimeoutMs: flags.webhookTimeoutMs,
          log: (message) => io.stderr.write(`${message}\n`),
          ...(flags.publicUrl !== undefined ? { publicUrl: flags.publicUrl } : {}),
          ...(linkSecret !== undefined ? { linkSecret } : {}),
          ...(tokens.kind === 'shared' ? { token: tokens.token } : tokens.kind === 'named' ? { tokens: tokens.tokens } : {}),
        });
        listeningAt = server.url;
        const tokenNote =
          tokens.kind === 'named'
            ? `named tokens required (${tokens.tokens.length}: by is the token's name)`
            : tokens.kind === 'shared'
              ? 'bearer token required (STEWARD_TOKEN)'
              : 'no token (loopback only)';
        io.stdout.write(
          `Steward serve on ${server.url} · store ${printableLocation(ctx.dbPath)} · model: ${ctx.model.label} · ` +
            `${tokenNote}` +
            `${linkSecret !== undefined ? ' · decision links on' : ''}` +
            `${flags.corsOrigin.length ? ` · CORS for ${flags.corsOrigin.join(', ')}` : ''}` +
            `${ctx.store.leases ? ` · leases ${flags.leaseMs} ms (a dead server's sessions are taken over after that)` : ''}` +
            `${webhooks.length ? ` · webhooks to ${webhooks.length} receiver(s)` : ''}\n` +
            `API: ${server.url}/openapi.json. Ctrl+C (or SIGTERM) stops gracefully.\n`,
        );
        const signal = await untilStopSignal();
        io.stdout.write(`${signal}: stopping; sends under way get ${flags.graceMs} ms to settle.\n`);
        const { settled, handedBack } = await server.close();
        io.stdout.write(
          `Stopped. ${settled} send(s) settled` +
            (handedBack.length ? `; handed back ${handedBack.length} (saved, they resume elsewhere): ${handedBack.join(', ')}.\n` : '.\n'),
        );
      } finally {
        await ctx.close();
      }
    });
}
