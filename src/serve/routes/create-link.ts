/**
 * POST /sessions/{id}/links — a decision link for the session's open wait
 * (src/http/decision-links.ts): a URL its recipient opens in any browser to decide that wait
 * once, recorded as theirs (`by`: the recipient, `via`: the link). The caller answers for who
 * the recipient is, as for a `by`: a named token that may not act for others makes links for
 * its own name only. It answers for the recipient's groups too (`groups`, stamped on the
 * link's decision for a wait that names its deciders): only groups the caller is in itself,
 * any for a caller who decides as `admin`.
 */
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { ActorNameSchema } from '../../core/machines/session.events.js';
import { attribute } from '../../http/auth.js';
import { DEFAULT_LINK_EXPIRES_IN, ExpiresInSchema, LinkGroupsSchema } from '../../http/decision-links.js';
import { ADMIN_GROUP, decisionGroups } from '../../http/access.js';
import { HttpError, statusOf } from '../../http/errors.js';
import { defineRoute, jsonContent } from '../../http/route.js';
import { whyNoLink, LINK_WAITS } from '../link-decisions.js';
import { BEARER, SessionIdParams, type ServeDeps } from '../route.js';
import { ErrorBody } from '../schemas.js';

export const CreateLinkBody = z
  .strictObject({
    recipient: ActorNameSchema.describe("who decides: recorded as the decision's `by`"),
    expiresIn: z
      .string()
      .max(20)
      .optional()
      .refine((text) => text === undefined || ExpiresInSchema.safeParse(text).success, 'must be a number and a unit from 1m to 30d, e.g. 30m, 24h or 7d')
      .describe(`how long the link works: 30m, 24h, 7d (1 minute to 30 days; default ${DEFAULT_LINK_EXPIRES_IN})`),
    wait: z.number().int().positive().optional().describe("the wait the link is for (the view's `wait`): refused (wait_closed) if it is no longer open"),
    groups: LinkGroupsSchema.optional().describe(
      "the groups the recipient decides as (the decision's `groups`): needed for a wait whose worker names who decides it " +
        '(`approvers`, `reviewers`); only groups the caller is in, any for an admin caller',
    ),
  })
  .describe('A decision link for the open wait');

export const CreateLinkResponse = z.object({
  url: z.string().describe('the link: open it in a browser to decide the wait once'),
  linkId: z.string().describe('names the link in the journal (`via: link:<linkId>`); not a credential'),
  sessionId: z.string(),
  wait: z.number().describe('the wait the link decides'),
  recipient: z.string(),
  expiresAt: z.string().describe('ISO time after which the link decides nothing'),
  groups: z.array(z.string()).optional().describe('the groups the recipient decides as, when the link names any'),
});

export const createLink = defineRoute(
  createRoute({
    method: 'post',
    path: '/sessions/{id}/links',
    summary:
      "A decision link for the session's open wait: a URL its recipient opens in any browser to decide that wait once " +
      `(${LINK_WAITS.join(', ')}), journalled with \`by\`: the recipient and \`via\`: the link. Needs the server's link secret ` +
      '(STEWARD_LINK_SECRET). With named tokens, a token that may not act for others makes links for its own name only',
    security: BEARER,
    request: { params: SessionIdParams, body: { required: true, content: { 'application/json': { schema: CreateLinkBody } } } },
    responses: {
      201: jsonContent('The link', CreateLinkResponse),
      403: jsonContent(
        "by_not_allowed: the recipient is another name than the caller's token, which may not act for others; decide_not_allowed: the caller may see the session but not decide it; " +
          'forbidden: `groups` names a group the caller is not in (and the caller is not admin)',
        ErrorBody,
      ),
      404: jsonContent(
        'No such session, or not one the caller may see (session_not_found), or this server makes no links (links_off: start it with STEWARD_LINK_SECRET)',
        ErrorBody,
      ),
      409: jsonContent(
        'wait_closed: no wait is open, or not the one named; event_refused: the open wait is one only the app decides (a tool call, the package choice)',
        ErrorBody,
      ),
    },
  }),
  ({ host, decisionLink, runtime, access }: ServeDeps) =>
    async (c) => {
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      // A link decides the wait without asking who opens it: only a caller who may decide the
      // session may make one (and one who may not see it gets the 404 of an unknown id).
      const read = await access.require(c.get('caller'), id, 'decide');
      if (!decisionLink)
        throw new HttpError(
          404,
          'links_off',
          'This server makes no decision links: start it with STEWARD_LINK_SECRET (or STEWARD_LINK_SECRET_FILE, --link-secret-file) set to at least 32 random bytes, e.g. `openssl rand -hex 32` (createServeApp / startServe: linkSecret).',
        );
      // The link's decision is the recipient's: held to the caller's token as a `by` would be.
      const caller = c.get('caller');
      if (!attribute(caller, body.recipient).ok)
        throw new HttpError(
          403,
          'by_not_allowed',
          `This is the token of "${caller!.name}": it makes links for "${caller!.name}" only, not ${JSON.stringify(body.recipient)}. ` +
            "Make the link with a token marked act-for-others in the server's token list, or with the recipient's own token.",
        );
      // The link's groups are vouched for by its maker, as its recipient is: a caller hands on only groups it is in.
      const own = decisionGroups(caller) ?? [];
      const foreign = own.includes(ADMIN_GROUP) ? [] : (body.groups ?? []).filter((g) => !own.includes(g));
      if (foreign.length)
        throw new HttpError(
          403,
          'forbidden',
          `The caller is not in the group${foreign.length > 1 ? 's' : ''} ${foreign.map((g) => JSON.stringify(g)).join(', ')}: a link names only groups its maker is in ` +
            `(${own.length ? own.map((g) => JSON.stringify(g)).join(', ') : 'none'}). Leave them out, or make the link with a token in them (or in ${ADMIN_GROUP}).`,
        );
      const { view } = await host.view(id, read);
      const workers = (view.packageId ? runtime.packages.get(view.packageId)?.workers : undefined) ?? [];
      const refusal = whyNoLink(view, body.recipient, workers, body.wait);
      if (refusal) throw new HttpError(statusOf(refusal.code), refusal.code, refusal.message);
      const link = decisionLink({
        session: id,
        // whyNoLink found it open.
        wait: view.wait!,
        recipient: body.recipient,
        ...(body.expiresIn !== undefined ? { expiresIn: body.expiresIn } : {}),
        ...(body.groups !== undefined ? { groups: body.groups } : {}),
      });
      const { token: _token, ...shown } = link;
      return c.json(CreateLinkResponse.parse(shown), 201);
    },
);
