/**
 * A decision link, opened and used (src/http/decision-links.ts): public routes, the link's
 * token is the credential.
 *
 * - `GET /links/{token}`: the page of the wait (src/serve/link-page.ts), with a form per
 *   decision it allows (`?decision=approve`: that one alone). A GET changes nothing.
 * - `POST /links/{token}`: the decision, as a form (the page's) or JSON; journalled with `by`:
 *   the recipient, `via`: `link:<id>`, naming the link's wait, so it decides that wait or
 *   nothing. Only from the page's own origin: a browser names where a post comes from
 *   (`Sec-Fetch-Site`, `Origin`), and a post from another site's page is refused (CSRF); a
 *   program sends neither, and holds the token anyway.
 *
 * A token never reaches a log: the path holds it, so a failure is logged as `/links/<token>`.
 */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import * as z from 'zod';
import type { SessionView } from '../../core/view.js';
import { linkVia, MAX_LINK_TOKEN_CHARS, type DecisionLinks, type LinkClaims } from '../../http/decision-links.js';
import { HttpError, invalidRequest, retryAfterOf, statusOf, toHttpError } from '../../http/errors.js';
import { defineRoute, type ValidationHook } from '../../http/route.js';
import { normalizeOrigin } from '../../http/security.js';
import { LINK_DECISIONS, linkDecisions, linkEvent, LinkDecisionBody, type LinkDecision } from '../link-decisions.js';
import { decisionPage, htmlAnswer, noticePage } from '../link-page.js';
import { PUBLIC, type ServeDeps } from '../route.js';
import { ErrorBody } from '../schemas.js';
import { isJson } from '../../http/security.js';

const LinkParams = z.object({
  token: z.string().min(1).max(MAX_LINK_TOKEN_CHARS).meta({ description: 'the token of a decision link (from POST /sessions/{id}/links)' }),
});

const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

const DecidedResponse = z.object({
  decided: z.enum(LINK_DECISIONS),
  sessionId: z.string(),
  wait: z.number(),
  by: z.string(),
  via: z.string(),
});

type PageStatus = Parameters<typeof htmlAnswer>[2];

/** A failure as the link's asker sees it: a page in a browser, the one error body for a program (a JSON post). */
class LinkRefusal extends Error {
  constructor(
    readonly status: PageStatus,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const wantsJson = (c: Context) => isJson(c.req.header('content-type'));

function refusalAnswer(c: Context, refusal: LinkRefusal): Response {
  // A session another server runs a moment longer, a busy server: the same decision may be sent again shortly.
  const retryAfter = retryAfterOf(refusal.code);
  if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
  if (c.req.method === 'POST' && wantsJson(c)) return c.json({ error: { code: refusal.code, message: refusal.detail } }, refusal.status);
  return htmlAnswer(c, noticePage(refusal.title, refusal.detail), refusal.status);
}

const NOT_A_LINK = () =>
  new LinkRefusal(
    404,
    'link_invalid',
    'Not a valid link',
    'This link is not one this server made, or it was cut short: open the whole link from your message, or ask for a new one.',
  );
const LINKS_OFF = () =>
  new LinkRefusal(404, 'links_off', 'Links are off', 'This server makes no decision links (it was started without a link secret): decide in the app.');

/** What a link is for now: its claims and the session's view, or a refusal (not a link, expired, its session gone). */
async function openedLink(links: DecisionLinks | null, token: string, deps: ServeDeps): Promise<{ claims: LinkClaims; view: SessionView }> {
  if (!links) throw LINKS_OFF();
  const check = links.check(token);
  if (!check.ok && check.why === 'forged') throw NOT_A_LINK();
  if (!check.ok)
    throw new LinkRefusal(
      410,
      'link_expired',
      'This link has expired',
      `This link for ${check.claims.recipient} worked until ${new Date(check.claims.expiresAt).toISOString()}: ask for a new one, or decide in the app.`,
    );
  try {
    return { claims: check.claims, view: (await deps.host.view(check.claims.sessionId)).view };
  } catch (error) {
    if (error instanceof HttpError && error.code === 'session_not_found')
      throw new LinkRefusal(404, 'session_not_found', 'No such session', 'The session of this link is not in this store.');
    throw error;
  }
}

/** The refusal for a link whose wait is not open: it changes nothing. */
function decidedAlready(claims: LinkClaims, view: SessionView): LinkRefusal {
  const now =
    view.phase === 'done'
      ? 'The session is done.'
      : view.phase === 'running'
        ? 'The team is at work on it.'
        : `It now waits for something else (wait ${view.wait}).`;
  const why = view.wait !== undefined && claims.wait > view.wait ? 'has not opened' : 'is no longer open: it was decided already';
  return new LinkRefusal(
    409,
    'wait_closed',
    'Nothing to decide',
    `The wait this link is for (wait ${claims.wait}) ${why}, so this link changes nothing. ${now}`,
  );
}

/**
 * Runs a link route: a refusal answers as one, and an unexpected failure is logged by the
 * link's place, never its path (the token), and answered as the server's failure.
 */
async function answering(c: Context, log: (message: string) => void, run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof LinkRefusal) return refusalAnswer(c, error);
    const http = toHttpError(error, (details) => log(`serve: ${c.req.method} /links/<token> failed: ${details}`));
    return refusalAnswer(c, new LinkRefusal(http.status as PageStatus, http.code, 'Something went wrong', http.message));
  }
}

/** A link's page for a path or body that broke the declaration: not a link (path), or a malformed decision (body). */
const refuseLinkRequest: ValidationHook = (result, c) => {
  if (result.success) return;
  if (result.target === 'param') return refusalAnswer(c, NOT_A_LINK());
  if (result.target === 'json') throw invalidRequest(result.error.issues, 'body');
  const detail = result.error.issues.map((i) => `${i.path.map(String).join('.') || 'form'}: ${i.message}`).join('; ');
  return refusalAnswer(c, new LinkRefusal(400, 'invalid_request', 'Not a decision', `The form sent is not a decision: ${detail}. Go back and try again.`));
};

export const openLink = defineRoute(
  createRoute({
    method: 'get',
    path: '/links/{token}',
    summary:
      'The page of a decision link: what its wait shows (the step and its reason, the artifact, the questions) and a form per decision it allows. ' +
      'Changes nothing. No credential: the token is one',
    security: PUBLIC,
    request: {
      params: LinkParams,
      // Not strict, and an unknown decision is ignored: a mail or chat service may add its own parameters to a link.
      query: z.object({
        decision: z
          .string()
          .max(20)
          .optional()
          .describe(`offer this decision only, one of ${LINK_DECISIONS.join(', ')} (a chat message's Approve button opens the page to confirm approving)`),
      }),
    },
    responses: {
      200: html("The wait's page; or, when the wait was decided already, a page that says so"),
      404: html('Not a link this server made (or links are off, or its session is gone)'),
      410: html('The link has expired'),
    },
  }),
  (deps: ServeDeps) => async (c) =>
    answering(c, deps.log, async () => {
      const { claims, view } = await openedLink(deps.links ?? null, c.req.valid('param').token, deps);
      if (view.wait !== claims.wait) return htmlAnswer(c, noticePage('Nothing to decide', decidedAlready(claims, view).detail), 200);
      const offered = linkDecisions(view);
      if (offered.length === 0) return htmlAnswer(c, noticePage('Decide in the app', 'This wait is one only the app decides.'), 200);
      // One decision asked for and allowed: that one alone; else all the wait allows.
      const { decision } = c.req.valid('query');
      const asked = offered.find((d) => d === decision);
      return htmlAnswer(c, decisionPage(view, claims, asked ? [asked] : offered), 200);
    }),
  refuseLinkRequest,
);

/**
 * Refuses a post that a browser says comes from another site's page (CSRF): `Sec-Fetch-Site`
 * other than same-origin, or an `Origin` other than this server's (its Host, or its public
 * URL behind a proxy). The app's Origin guard has already refused most; this one refuses the
 * origins listed for CORS too (their pages call the API with a token, never a link) and pages
 * of the same site on another origin, which send no foreign Origin the guard would see.
 */
function refuseCrossSite(c: Context, publicUrl: ServeDeps['publicUrl']): void {
  const site = c.req.header('sec-fetch-site');
  const origin = c.req.header('origin');
  const host = (c.req.header('host') ?? '').toLowerCase();
  const base = publicUrl?.();
  const own = new Set([`http://${host}`, `https://${host}`, ...(base ? [new URL(base).origin] : [])]);
  if ((site !== undefined && site !== 'same-origin') || (origin !== undefined && !own.has(normalizeOrigin(origin))))
    throw new LinkRefusal(403, 'forbidden_origin', 'Refused', "A decision is taken from the link's own page only: open the link itself and decide there.");
}

export const decideByLink = defineRoute(
  createRoute({
    method: 'post',
    path: '/links/{token}',
    summary:
      `A decision link's decision: \`decision\` (${LINK_DECISIONS.join(', ')}) with` +
      ' `reason`, `text` or `answer.<question id>` fields, ' +
      "as the page's form or as JSON. Journalled with `by`: the link's recipient, `via`: `link:<id>`, for the link's wait only: once that wait is " +
      "decided the link changes nothing (409). A post from another site's page is refused (403). Answers once the session took the decision: a page, or JSON for a JSON post",
    security: PUBLIC,
    // No JSON reader: the body is a form or JSON, each read by the validator of its type.
    middleware: [],
    request: {
      params: LinkParams,
      body: {
        required: false,
        content: { 'application/x-www-form-urlencoded': { schema: LinkDecisionBody }, 'application/json': { schema: LinkDecisionBody } },
      },
    },
    responses: {
      200: { description: 'Taken: the session runs on', content: { 'text/html': { schema: z.string() }, 'application/json': { schema: DecidedResponse } } },
      400: html('Not a decision this wait allows, or a malformed one (JSON: the error body)'),
      403: html("Posted from another site's page (forbidden_origin)"),
      404: html('Not a link this server made'),
      409: {
        description: 'The wait was decided already (wait_closed): nothing changed',
        content: { 'text/html': { schema: z.string() }, 'application/json': { schema: ErrorBody } },
      },
      410: html('The link has expired'),
      429: html('server_busy: this server runs as many sessions as it may; try again in a moment'),
    },
  }),
  (deps: ServeDeps) => async (c) =>
    answering(c, deps.log, async () => {
      refuseCrossSite(c, deps.publicUrl);
      const json = wantsJson(c);
      const body = json ? c.req.valid('json') : c.req.valid('form');
      const { claims, view } = await openedLink(deps.links ?? null, c.req.valid('param').token, deps);
      if (view.wait !== claims.wait) throw decidedAlready(claims, view);
      const parsed = LinkDecisionBody.safeParse(body);
      if (!parsed.success) throw new LinkRefusal(400, 'invalid_request', 'Not a decision', `Send a decision: ${LINK_DECISIONS.join(', ')}.`);
      const event = linkEvent(view, claims, parsed.data);
      if ('problem' in event) throw new LinkRefusal(400, 'invalid_request', 'Not a decision', `${event.problem} Go back and try again.`);
      if (deps.host.isFull(claims.sessionId))
        throw new LinkRefusal(429, 'server_busy', 'Busy', 'This server is busy: go back and send your decision again in a moment.');
      const result = await deps.host.sendAsync(claims.sessionId, event);
      if (!('accepted' in result) && !(result.ok && !result.repeated)) {
        // A repeat of the decision that closed the wait applies nothing either: it was decided already.
        if (result.ok || result.error.code === 'wait_closed') throw decidedAlready(claims, result.view);
        const told = toHttpError(result.error, (details) => deps.log(`serve: POST /links/<token> failed: ${details}`));
        throw new LinkRefusal(statusOf(result.error.code) as PageStatus, result.error.code, 'Not taken', told.message);
      }
      const { decision } = parsed.data;
      if (json)
        return c.json(
          DecidedResponse.parse({ decided: decision, sessionId: claims.sessionId, wait: claims.wait, by: claims.recipient, via: linkVia(claims.linkId) }),
          200,
        );
      return htmlAnswer(c, noticePage('Thank you', `${DONE[decision]} It is recorded as decided by ${claims.recipient}. You can close this page.`), 200);
    }),
  refuseLinkRequest,
);

const DONE: Record<LinkDecision, string> = {
  approve: 'You approved the step: the team goes on.',
  reject: 'You rejected it: the team hears why.',
  accept: 'You accepted the result: the team goes on.',
  answer: 'Your answers were sent.',
  skip: 'You skipped the questions.',
  reply: 'Your reply was sent.',
};
