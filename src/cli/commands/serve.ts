/**
 * `steward serve`: the HTTP API (src/serve) on the store of --db / STEWARD_DB, until
 * SIGINT or SIGTERM; then a graceful shutdown (sends under way get --grace-ms to settle,
 * the rest stay saved and resume elsewhere). STEWARD_TOKEN is the bearer token; it is
 * required on any address but loopback.
 */
import type { Command } from 'commander';
import { printableLocation } from '../../store/open-store.js';
import { DEFAULT_GRACE_MS, DEFAULT_LEASE_MS, DEFAULT_SERVE_PORT } from '../../serve/defaults.js';
import { openContext, wholeNumber } from '../context.js';

interface ServeFlags {
  host: string;
  port: number;
  graceMs: number;
  leaseMs: number;
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('serve the sessions over HTTP (JSON API, OpenAPI at /openapi.json); STEWARD_TOKEN: the bearer token')
    .option('--host <address>', 'the address to listen on (anything but loopback needs STEWARD_TOKEN)', '127.0.0.1')
    .option('--port <n>', `the port (0: any free port)`, wholeNumber(0, 65535), DEFAULT_SERVE_PORT)
    .option('--grace-ms <n>', 'on shutdown, how long sends under way may take to settle', wholeNumber(0), DEFAULT_GRACE_MS)
    .option('--lease-ms <n>', 'PostgreSQL: how long a lease on a running session lasts unrenewed; a dead server\'s sessions are taken over after it', wholeNumber(100), DEFAULT_LEASE_MS)
    .action(async (flags: ServeFlags, command: Command) => {
      // Loaded here: the other commands never pay for the HTTP stack.
      const { startServe } = await import('../../serve/server.js');
      const ctx = await openContext(command.optsWithGlobals(), { command: 'serve' });
      try {
        const token = process.env.STEWARD_TOKEN?.trim() || undefined;
        const server = await startServe({
          runtime: ctx.runtime,
          store: ctx.store,
          host: flags.host,
          port: flags.port,
          graceMs: flags.graceMs,
          leaseMs: flags.leaseMs,
          storeLabel: printableLocation(ctx.dbPath),
          ...(token ? { token } : {}),
        });
        process.stdout.write(
          `Steward serve on ${server.url} · store ${printableLocation(ctx.dbPath)} · model: ${ctx.model.label} · ` +
            `${token ? 'bearer token required (STEWARD_TOKEN)' : 'no token (loopback only)'}` +
            `${ctx.store.leases ? ` · leases ${flags.leaseMs} ms (a dead server's sessions are taken over after that)` : ''}\n` +
            `API: ${server.url}/openapi.json. Ctrl+C (or SIGTERM) stops gracefully.\n`,
        );
        const signal = await new Promise<NodeJS.Signals>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        process.stdout.write(`${signal}: stopping; sends under way get ${flags.graceMs} ms to settle.\n`);
        const { settled, handedBack } = await server.close();
        process.stdout.write(
          `Stopped. ${settled} send(s) settled` +
            (handedBack.length ? `; handed back ${handedBack.length} (saved, they resume elsewhere): ${handedBack.join(', ')}.\n` : '.\n'),
        );
      } finally {
        await ctx.close();
      }
    });
}
