/**
 * The page a decision link opens: HTML written here, no build step and no script. What the
 * wait shows (the step and its reason, the artifact, the questions, the manager's message)
 * and one form per decision it allows, each posting back to the link itself. Everything the
 * session holds was written by a model or a person: it is escaped as text, never markup.
 *
 * The answers carry a strict Content-Security-Policy: nothing loads (`default-src 'none'`),
 * no script runs at all, the one style sheet is inline and allowed by its hash, forms post
 * only to this server, and no other site may frame the page. The link is a credential: no
 * referrer leaves for another origin and nothing is cached. (`same-origin`, not `no-referrer`:
 * under `no-referrer` a browser sends `Origin: null` with the form's post, and the Origin
 * check could no longer tell the link's own page from another site's.)
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { DEFAULT_LIMITS } from '../core/limits.js';
import type { SessionView } from '../core/view.js';
import type { LinkClaims } from '../http/decision-links.js';
import { safeText } from '../text/safe-text.js';
import type { LinkDecision } from './link-decisions.js';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.5rem}
.meta{color:#555;font-size:.9rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f5f5f3;padding:.75rem;border-radius:4px}
form{margin:1rem 0;padding:.75rem;border:1px solid #ddd;border-radius:4px}
textarea,input[type=text]{display:block;width:100%;box-sizing:border-box;margin:.25rem 0 .5rem;font:inherit}
button{font:inherit;padding:.4rem 1rem;cursor:pointer}
.notice{padding:.75rem;border-left:4px solid #888;background:#f7f7f7}
`;

/** The policy of every page this module writes: the style above by its hash, and nothing else. */
export const LINK_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value; control and invisible characters shown, not kept (a bidi mark could reorder what the page seems to say). */
const esc = (text: string): string => safeText(text).replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** What each decision's button says. */
const BUTTON: Record<LinkDecision, string> = {
  approve: 'Approve',
  reject: 'Reject',
  accept: 'Accept',
  answer: 'Send answers',
  skip: 'Skip the questions',
  reply: 'Send',
};

const WAIT_TITLE: Partial<Record<string, string>> = {
  approve_step: 'A step waits for your approval',
  review_artifact: 'A result waits for your review',
  worker_questions: 'A worker asks you',
  input: 'The team asks you',
  revision: 'Say what to change',
};

function document(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="same-origin"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
  );
}

/**
 * An HTML answer with the headers every link page has.
 *
 * @example
 * return htmlAnswer(c, noticePage('Link expired', 'Ask for a new link.'), 410);
 */
export function htmlAnswer(c: Context, html: string, status: 200 | 400 | 403 | 404 | 409 | 410 | 429 | 500 | 503): Response {
  c.header('Content-Security-Policy', LINK_PAGE_CSP);
  c.header('Referrer-Policy', 'same-origin');
  c.header('Cache-Control', 'no-store');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('X-Frame-Options', 'DENY');
  return c.html(html, status);
}

/**
 * A page that says one thing: the link is not valid, expired, its wait was decided, the decision was taken.
 *
 * @example
 * noticePage('Decided', 'You approved the step. The team goes on.');
 */
export function noticePage(title: string, message: string): string {
  return document(title, `<h1>${esc(title)}</h1><p class="notice" role="status">${esc(message)}</p>`);
}

function stepSection(view: SessionView): string {
  const step = view.pendingStep;
  if (!step) return '';
  const who = step.roleId ? `${step.workerId} (${step.roleId})` : step.workerId;
  const why =
    view.approvalRequiredBy === 'policy'
      ? 'This step needs approval by policy.'
      : view.approvalRequiredBy === 'model'
        ? 'The manager asked for your approval.'
        : '';
  return `<h2>The step</h2><p>Run <strong>${esc(who)}</strong>. ${esc(why)}</p><pre>${esc(step.reason)}</pre>`;
}

function artifactSection(view: SessionView): string {
  const artifact = view.artifact;
  if (!artifact) return '';
  const tags = artifact.tags.map((t) => `<h3>${esc(t.tag)} <span class="meta">v${t.version}</span></h3><pre>${esc(t.body)}</pre>`).join('');
  return `<h2>The result</h2><p class="meta">${esc(artifact.id)} by ${esc(artifact.workerId)}</p>${tags}`;
}

function form(decision: LinkDecision, fields = ''): string {
  return `<form method="post"><input type="hidden" name="decision" value="${decision}">${fields}<button type="submit">${BUTTON[decision]}</button></form>`;
}

function decisionForms(view: SessionView, offered: readonly LinkDecision[]): string {
  const questions = view.questions ?? [];
  return offered
    .map((decision) => {
      switch (decision) {
        case 'reject':
          return form(decision, `<label>Why (optional)<textarea name="reason" rows="3" maxlength="${DEFAULT_LIMITS.userTextChars}"></textarea></label>`);
        case 'reply':
          return form(decision, `<label>Your reply<textarea name="text" rows="5" required></textarea></label>`);
        case 'answer':
          return form(decision, questions.map((q) => `<label>${esc(q.text)}<input type="text" name="answer.${esc(q.id)}"></label>`).join(''));
        default:
          return form(decision);
      }
    })
    .join('');
}

/**
 * The page of an open wait: what it shows, and a form for each decision the link offers.
 *
 * @example
 * htmlAnswer(c, decisionPage(view, claims, ['approve', 'reject']), 200);
 */
export function decisionPage(view: SessionView, claims: LinkClaims, offered: readonly LinkDecision[]): string {
  const title = WAIT_TITLE[view.waitingReason ?? ''] ?? 'A decision waits';
  const said = [view.message, view.assessment, view.notice].filter((t): t is string => !!t?.trim());
  const questions =
    (view.questions ?? []).length && !offered.includes('answer')
      ? `<h2>Questions</h2><ul>${view.questions!.map((q) => `<li>${esc(q.text)}</li>`).join('')}</ul>`
      : '';
  const body =
    `<h1>${esc(title)}</h1>` +
    `<p class="meta">For ${esc(claims.recipient)} · session ${esc(view.id)} · wait ${claims.wait} · this link works until ${esc(new Date(claims.expiresAt).toISOString())}, for one decision.</p>` +
    said.map((t) => `<pre>${esc(t)}</pre>`).join('') +
    stepSection(view) +
    artifactSection(view) +
    questions +
    `<h2>Your decision</h2>${decisionForms(view, offered)}`;
  return document(title, body);
}
