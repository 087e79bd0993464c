/// <reference lib="dom" />
/**
 * The details column: what the manager says, the step, a worker's MCP tool calls while they
 * are decided or run, a fan-out's team (each worker, where it is, its artifact), the artifact under review, the questions, the blackboard with its versions, the refused events, the usage and (opened on
 * demand) the raw context — of the live session or of a time-travel point.
 */
import type { SessionView, ToolCallView } from '../../core/view.js';
import type { SessionContext, Step } from '../../core/machines/session.context.js';
import { approvalReasonText } from '../../core/machines/approval.js';
import { h } from './dom.js';
import { teamSection } from './team-view.js';

/**
 * The session's step is one object from proposal to review (`view.pendingStep`), so its
 * heading and the state of its approval follow where the session is: "Pending step" only
 * while it waits for approval, never once it was approved and ran.
 */
function stepHeading(view: SessionView, step: Step): { title: string; approval: string } {
  if (view.waitingReason === 'approve_step') {
    // Why it waits: the deployment's approval policy, or the manager asked.
    const why =
      view.approvalRequiredBy === 'model'
        ? `required (${approvalReasonText(step, 'model')})`
        : view.approvalRequiredBy
          ? approvalReasonText(step, view.approvalRequiredBy)
          : 'required';
    return { title: 'Pending step', approval: `${why}: approve or reject it` };
  }
  const approval = step.requiresApproval ? 'approved' : 'not required';
  if (view.waitingReason === 'worker_questions') return { title: 'Step asking you', approval };
  if (view.waitingReason === 'review_artifact' || view.waitingReason === 'revision') return { title: 'Step that wrote the artifact', approval };
  return { title: view.phase === 'running' ? 'Running step' : 'Last step', approval };
}

function stepSection(view: SessionView, step: Step): HTMLElement {
  const { title, approval } = stepHeading(view, step);
  return section(
    title,
    h(
      'dl',
      { id: 'pending-step', 'data-heading': title },
      h('dt', null, 'worker'),
      h('dd', null, step.workerId + (step.roleId ? ` (role ${step.roleId})` : '')),
      h('dt', null, 'reason'),
      h('dd', null, step.reason),
      h('dt', null, 'approval'),
      h('dd', { id: 'approval-reason' }, approval),
      step.revises ? [h('dt', null, 'revises'), h('dd', null, `${step.revises}${step.revisionNotes ? `: ${step.revisionNotes}` : ''}`)] : null,
    ),
  );
}

/** What became of each call, in words: a call cut off by a stopped process may or may not have taken effect. */
const CALL_STATUS_TEXT: Readonly<Record<ToolCallView['status'], string>> = {
  pending: 'waits for a decision',
  approved: 'approved: runs in its turn',
  asking: 'its server asks a person for input',
  interrupted: 'cut off when its process stopped: it may or may not have taken effect',
  rejected: 'rejected: it does not run',
  done: 'done',
};

function toolCallsSection(calls: ToolCallView[]): HTMLElement {
  return section(
    'Tool calls',
    h(
      'ol',
      { id: 'tool-calls' },
      calls.map((c) =>
        h(
          'li',
          { 'data-call': c.callId },
          h('code', null, `${c.server}.${c.tool}`),
          ` (${c.callId}) · `,
          h('span', { class: `status-${c.status}` }, CALL_STATUS_TEXT[c.status]),
          c.description ? h('div', { class: 'muted' }, c.description) : null,
          h('pre', { class: 'body' }, JSON.stringify(c.arguments, null, 2)),
        ),
      ),
    ),
  );
}

function section(title: string, ...children: (Node | string | null)[]): HTMLElement {
  return h('section', { class: 'detail' }, h('h3', null, title), ...children);
}

export function details(view: SessionView, context: SessionContext): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (view.notice) out.push(h('p', { class: 'notice' }, view.notice));
  if (view.message) out.push(section('Manager says', h('p', { class: 'message' }, view.message)));
  if (view.assessment) out.push(section('Assessment', h('p', null, view.assessment)));
  if (view.pendingStep) out.push(stepSection(view, view.pendingStep));
  if (view.toolCalls?.length) out.push(toolCallsSection(view.toolCalls));
  if (view.team?.length) out.push(teamSection(view.team));
  // In a fan-in the team shows each artifact under review; the first is not shown twice.
  if (view.artifact && !view.team?.some((t) => t.artifact?.id === view.artifact!.id)) {
    const a = view.artifact;
    out.push(
      section(
        `Artifact ${a.id}`,
        h('p', { class: 'muted' }, `${a.workerId}${a.roleId ? ` (${a.roleId})` : ''} · ${a.status}${a.revises ? ` · revises ${a.revises}` : ''}`),
        h(
          'div',
          { id: 'artifact' },
          a.tags.map((t) => h('details', { open: true }, h('summary', null, `${t.tag} v${t.version}`), h('pre', { class: 'body' }, t.body))),
        ),
        a.questions?.length
          ? h(
              'ol',
              { class: 'questions' },
              a.questions.map((q) => h('li', null, `${q.id}: ${q.text}`)),
            )
          : null,
      ),
    );
  }
  if (view.questions?.length)
    out.push(
      section(
        'Questions',
        h(
          'ol',
          { class: 'questions' },
          view.questions.map((q) => h('li', null, `${q.id}: ${q.text}`)),
        ),
      ),
    );
  out.push(
    section(
      'Blackboard',
      view.blackboard.length === 0
        ? h('p', { class: 'muted' }, 'empty')
        : h(
            'ul',
            { id: 'blackboard' },
            view.blackboard.map((b) => {
              const versions = context.blackboard[b.tag] ?? [];
              return h(
                'li',
                null,
                h(
                  'details',
                  null,
                  h('summary', null, h('code', null, b.tag), ` v${b.version} · ${b.writtenBy}`),
                  versions
                    .slice()
                    .reverse()
                    .map((v) =>
                      'body' in v
                        ? h('div', null, h('div', { class: 'muted' }, `v${v.version} by ${v.writtenBy}`), h('pre', { class: 'body' }, v.body))
                        : h(
                            'p',
                            { class: 'muted' },
                            `${v.archived} older version${v.archived === 1 ? '' : 's'} archived (${v.size} chars): the snapshot keeps only the latest body and those under review`,
                          ),
                    ),
                ),
              );
            }),
          ),
    ),
  );
  if (view.artifacts.length) {
    out.push(
      section(
        'Artifacts',
        h(
          'ul',
          null,
          view.artifacts.map((a) => h('li', null, `${a.id} · ${a.workerId} · `, h('span', { class: `status-${a.status}` }, a.status))),
        ),
      ),
    );
  }
  out.push(
    section(
      `Refused events (${view.rejections.length})`,
      view.rejections.length === 0
        ? h('p', { class: 'muted' }, 'none')
        : h(
            'ol',
            { id: 'rejections' },
            view.rejections
              .slice()
              .reverse()
              .map((r) => h('li', null, h('code', null, r.type), ` in ${r.state}: `, r.reason)),
          ),
    ),
  );
  out.push(
    section(
      'Usage',
      h('p', { id: 'usage' }, `${view.usage.promptTokens} prompt + ${view.usage.completionTokens} completion tokens · ${view.rounds} model calls`),
    ),
  );
  // The context can be large (whole conversations): it is written out only when opened.
  const raw = h('details', { class: 'raw', id: 'raw-context' }, h('summary', null, 'Context (JSON)'));
  raw.addEventListener('toggle', () => {
    if (raw.open && !raw.querySelector('pre')) raw.append(h('pre', null, JSON.stringify(context, null, 2)));
  });
  out.push(raw);
  return out;
}
