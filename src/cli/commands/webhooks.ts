/**
 * `steward webhooks dead`: the webhook messages given up on after the last try (the store's
 * outbox, src/store/outbox.ts), and `--retry ID` / `--retry-all` to make them due again (a
 * running `steward serve --webhook` on the store sends them). A receiver is shown as
 * `shownReceiver` shows it: never its path or query, which may hold its secret.
 */
import type { Command } from 'commander';
import { CliError, printJson, withContext } from '../context.js';
import { safeText } from '../../text/safe-text.js';
import type { OutboxMessage } from '../../store/outbox.js';
import { shownReceiver } from '../../webhooks/receivers.js';
import type { CliIo } from '../io.js';

const LISTED = 100;

function line(message: OutboxMessage): string {
  return safeText(
    `${message.id}  ${message.type}  session ${message.sessionId}  → ${shownReceiver(message.receiver)}  ` +
      `${message.attempts} tries, last: ${message.lastError ?? '?'}  (${message.createdAt})`,
  );
}

export function register(program: Command, io: CliIo): void {
  program
    .command('webhooks')
    .description('the webhook outbox of the store (`steward serve --webhook`)')
    .command('dead')
    .description(`list the webhook messages given up on after the last try (the ${LISTED} most recent), or retry them`)
    .option('--retry <id>', 'make this dead letter due again (a server with the receiver sends it)')
    .option('--retry-all', 'make every dead letter due again')
    .option('--json', 'print the dead letters as JSON')
    .action(async (options: { retry?: string; retryAll?: boolean; json?: boolean }, command: Command) => {
      if (options.retry !== undefined && options.retryAll) throw new CliError('usage', 'Give --retry ID or --retry-all, not both.');
      const retrying = options.retry !== undefined || options.retryAll === true;
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          const outbox = ctx.store.outbox;
          if (!outbox) throw new CliError('user_error', 'This store keeps no webhook outbox.');
          if (retrying) {
            const retried = await outbox.retryDead(options.retry, Date.now());
            if (options.retry !== undefined && retried === 0)
              throw new CliError('not_found', `No dead letter "${safeText(options.retry)}": list them with \`steward webhooks dead\`.`);
            io.stdout.write(`${retried} dead letter(s) due again: a running \`steward serve --webhook\` sends them.\n`);
            return;
          }
          const dead = await outbox.deadLetters(LISTED);
          if (options.json)
            printJson(
              io,
              dead.map(({ payload: _payload, ...rest }) => ({ ...rest, receiver: shownReceiver(rest.receiver) })),
            );
          else io.stdout.write(dead.length ? `${dead.map(line).join('\n')}\n` : 'No dead letters.\n');
        },
        { readStore: !retrying },
      );
    });
}
