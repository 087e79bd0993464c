/// <reference lib="dom" />
/**
 * A fan-out on the page: the team's items in the details column (each worker, where it is,
 * its artifact's bodies while under review), and the heading of the form that decides one
 * item (events-panel.ts builds a form per item the wait is about, from core/team-items.ts).
 * What a model wrote goes into the page as text nodes only (dom.ts).
 */
import type { SessionView, TeamItemView } from '../../core/view.js';
import { h } from './dom.js';

/** What each status means, in words. */
const STATUS_TEXT: Readonly<Record<TeamItemView['status'], string>> = {
  proposed: 'waits for approval',
  approved: 'approved: starts with the others',
  running: 'writing',
  submitted: 'its artifact is under review',
  asked: 'asks questions (answered after the review)',
  held: 'its tool calls wait (decided after the review)',
};

/** The team's section of the details column: one entry per worker of the fan-out. */
export function teamSection(team: TeamItemView[]): HTMLElement {
  return h(
    'section',
    { class: 'detail' },
    h('h3', null, `Team (${team.length} worker${team.length === 1 ? '' : 's'} at once)`),
    h(
      'ol',
      { id: 'team' },
      team.map((t) =>
        h(
          'li',
          { 'data-item': t.item, 'data-status': t.status },
          h('code', null, t.workerId),
          t.roleId ? ` (role ${t.roleId})` : null,
          ` · ${t.item} · `,
          h('span', { class: `status-${t.status}` }, STATUS_TEXT[t.status]),
          h('div', { class: 'muted' }, t.reason),
          t.artifact
            ? h(
                'div',
                { class: 'team-artifact', 'data-artifact': t.artifact.id },
                t.artifact.tags.map((tag) =>
                  h('details', { open: true }, h('summary', null, `${t.artifact!.id} · ${tag.tag} v${tag.version}`), h('pre', { class: 'body' }, tag.body)),
                ),
              )
            : null,
          t.questions?.length
            ? h(
                'ol',
                { class: 'questions' },
                t.questions.map((q) => h('li', null, `${q.id}: ${q.text}`)),
              )
            : null,
        ),
      ),
    ),
  );
}

/** What sending each decision does to an item. */
const MEANING: Readonly<Record<string, string>> = {
  user_approved_next_step: 'approve: it runs with the others once every step is decided',
  user_rejected_next_step: 'reject: it does not run; the manager is told',
  user_accepted_artifact: 'accept',
  user_rejected_artifact: 'reject: the manager reads the reason',
};

/** The heading of the form that decides `item` (a proposed step, or an artifact under review), with the item hidden in the form. */
export function itemHeading(type: string, item: TeamItemView): HTMLElement {
  const subject = item.artifact && type.endsWith('_artifact') ? `${item.artifact.id} by ${item.workerId}` : `${item.workerId} (${item.item})`;
  return h(
    'p',
    { class: 'item-heading' },
    h('code', null, subject),
    h('strong', { class: 'meaning' }, ` · ${MEANING[type] ?? type}`),
    type.endsWith('_next_step') ? h('input', { name: 'item', type: 'hidden', value: item.item }) : null,
  );
}

/** The step a form edits: the item's, or the session's single proposed step. */
export const stepOf = (view: SessionView | null, item: TeamItemView | undefined) => item ?? view?.pendingStep;
/** The artifact a form decides: the item's, or the one under review. */
export const artifactOf = (view: SessionView | null, item: TeamItemView | undefined) => item?.artifact ?? view?.artifact;
