/**
 * `steward link ID --to NAME`: a decision link for the session's open wait, as `steward serve`
 * makes one (`POST /sessions/{id}/links`): signed with the same secret (STEWARD_LINK_SECRET,
 * STEWARD_LINK_SECRET_FILE or --link-secret-file), at the serve's public URL, so the server
 * that answers the link takes it. Reads the store, writes nothing. `--group` names the groups
 * the recipient decides as, for a wait whose worker names its deciders: the CLI holds the
 * database and vouches for any group (it decides as admin itself).
 */
import type { Command } from 'commander';
import { UserError } from '../../core/errors.js';
import { DecisionLinks, DEFAULT_LINK_EXPIRES_IN, linkSecretFromEnv } from '../../http/decision-links.js';
import { decisionLinkFn } from '../../serve/decision-link.js';
import { whyNoLink } from '../../serve/link-decisions.js';
import { parsePublicUrl } from '../../serve/public-url.js';
import { safeLine } from '../../text/safe-text.js';
import { peekSession, printJson, sessionIdArgument, withContext } from '../context.js';
import type { CliIo } from '../io.js';

interface LinkFlags {
  to: string;
  expires: string;
  publicUrl: string;
  linkSecretFile?: string;
  group: string[];
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function register(program: Command, io: CliIo): void {
  program
    .command('link')
    .description(
      "print a decision link for the session's open wait: its recipient opens it in a browser and decides once, " +
        'recorded as theirs; signed with the link secret of the steward serve that answers it (STEWARD_LINK_SECRET)',
    )
    .argument('<id>', 'the session id (see `steward list`)', sessionIdArgument('steward link'))
    .requiredOption('--to <name>', "who decides: recorded as the decision's `by`")
    .requiredOption('--public-url <url>', 'the URL people reach that steward serve at (its --public-url, or its address)')
    .option('--expires <duration>', 'how long the link works: 30m, 24h, 7d (1 minute to 30 days)', DEFAULT_LINK_EXPIRES_IN)
    .option(
      '--group <name>',
      'a group the recipient decides as (repeatable, at most 4): needed for a wait whose worker names its approvers or reviewers',
      collect,
      [],
    )
    .option('--link-secret-file <path>', 'a file holding the link secret (else STEWARD_LINK_SECRET or STEWARD_LINK_SECRET_FILE)')
    .option('--json', 'print the link and what it is for as JSON')
    .action(async (id: string, flags: LinkFlags, command: Command) => {
      // Checked before the store opens: a missing secret or a bad URL ends here.
      const secret = linkSecretFromEnv(io.env, flags.linkSecretFile, io.cwd);
      if (secret === undefined)
        throw new UserError(
          'steward link signs with the link secret of the steward serve that answers the link: set STEWARD_LINK_SECRET (or STEWARD_LINK_SECRET_FILE, --link-secret-file) as that server has it.',
        );
      const base = parsePublicUrl(flags.publicUrl, '--public-url');
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          const { view } = await peekSession(ctx, id);
          const workers = (view.packageId ? ctx.runtime.packages.get(view.packageId)?.workers : undefined) ?? [];
          const refusal = whyNoLink(view, flags.to, workers);
          if (refusal) throw new UserError(refusal.message);
          const link = decisionLinkFn(
            new DecisionLinks(secret),
            () => base,
          )({
            session: id,
            wait: view.wait!,
            recipient: flags.to,
            expiresIn: flags.expires,
            ...(flags.group.length ? { groups: flags.group } : {}),
          });
          const { token: _token, ...shown } = link;
          if (flags.json) printJson(io, shown);
          else
            io.stdout.write(
              `${link.url}\nFor ${safeLine(link.recipient)}${link.groups ? ` (as ${link.groups.map(safeLine).join(', ')})` : ''} to decide wait ${link.wait} (${view.waitingReason}) once, until ${link.expiresAt}.\n`,
            );
        },
        { readStore: true },
      );
    });
}
