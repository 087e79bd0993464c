/**
 * A fan-out for humans: the workers the manager proposed in one reply (`view.team`), each an
 * item decided on its own. What the session waits for (each proposed step, each artifact under
 * review), the team as `steward show` lists it, and the workers running at once. Returns raw
 * text: render.ts makes it safe before it reaches a terminal.
 */
import { stateString } from '../core/machines/refusals.js';
import type { SessionContext } from '../core/machines/session.context.js';
import { proposedItems, reviewedItems } from '../core/team-items.js';
import type { SessionView, TeamItemView } from '../core/view.js';
import type { SkillPackage } from '../skills/index.js';

/** What each status of an item means, in words. */
const STATUS_TEXT: Readonly<Record<TeamItemView['status'], string>> = {
  proposed: 'waits for approval',
  approved: 'approved, starts with the others',
  running: 'writing',
  submitted: 'artifact under review',
  asked: 'asks questions (answered after the review)',
  held: 'tool calls wait (decided after the review)',
};

/** One line per item: its call, its worker, where it is, its artifact. */
export function teamLines(view: Pick<SessionView, 'team'>): string[] {
  return (view.team ?? []).map(
    (t) =>
      `${t.item} · ${t.workerId}${t.roleId ? ` (${t.roleId})` : ''} · ${t.status}: ${STATUS_TEXT[t.status]}${t.artifact ? ` · artifact ${t.artifact.id}` : ''}`,
  );
}

/**
 * What the session waits for when a fan-out's items are decided one by one, or undefined.
 *
 * @example
 * teamHeadline(view); // 'Waiting for you: approve or reject 3 proposed steps, one at a time (north, south, east).'
 */
export function teamHeadline(view: SessionView): string | undefined {
  const proposed = proposedItems(view);
  if (proposed.length) {
    const count = proposed.length === 1 ? 'the last proposed step' : `${proposed.length} proposed steps, one at a time`;
    return `Waiting for you: approve or reject ${count} (${proposed.map((t) => t.workerId).join(', ')}).`;
  }
  const reviewed = reviewedItems(view);
  if (reviewed.length > 1) {
    return `Waiting for you: accept or reject ${reviewed.length} artifacts, one at a time (${reviewed.map((t) => `${t.artifact.id} by ${t.workerId}`).join(', ')}).`;
  }
  return undefined;
}

export interface TeamBlock {
  title: string;
  body: string;
  tone: 'info' | 'step';
}

const tagList = (tags: readonly string[]) => (tags.length ? tags.join(', ') : '(none)');

/** approve_step of a fan-out: a block per proposed step, with the command that decides it. */
export function proposedStepBlocks(view: SessionView, pkg: SkillPackage | undefined, by: string): TeamBlock[] {
  const proposed = proposedItems(view);
  return proposed.map((t, i) => {
    const worker = pkg?.workers.find((w) => w.id === t.workerId);
    const lines = [
      `Reason: ${t.reason}`,
      ...(t.approvalRequiredBy ? [`Approval: ${t.approvalRequiredBy === 'model' ? 'asked for by the manager' : 'required by the approval policy'}`] : []),
      ...(worker ? [`${worker.title}: ${worker.description}`, `Reads: ${tagList(worker.inputTags)} → writes: ${tagList(worker.outputTags)}`] : []),
      `Decide it: approve --item ${t.item} [--reason TEXT --role ID] · reject-step --item ${t.item} --reason TEXT`,
    ];
    return {
      title: `Proposed step ${i + 1} of ${proposed.length} · ${t.item} · run ${t.workerId}${t.roleId ? ` as ${t.roleId}` : ''}${by}`,
      body: lines.join('\n'),
      tone: 'step',
    };
  });
}

/** review_artifact of a fan-in with several artifacts: each one's tags, and the command that decides it. */
export function reviewedArtifactBlocks(view: SessionView, by: string): TeamBlock[] {
  const reviewed = reviewedItems(view);
  if (reviewed.length < 2) return [];
  return reviewed.flatMap(({ artifact, item }, i) => [
    ...artifact.tags.map(({ tag, version, body }): TeamBlock => ({
      title: `Artifact ${i + 1} of ${reviewed.length} · ${artifact.id} by ${artifact.workerId}${artifact.roleId ? ` (${artifact.roleId})` : ''} · ${tag} v${version}${by}`,
      body,
      tone: 'info',
    })),
    {
      title: `Decide ${artifact.id} (${item})`,
      body: `accept --artifact ${artifact.id} · reject --artifact ${artifact.id} --reason TEXT (the manager reads the reason)${
        artifact.questions?.length
          ? `\n${artifact.workerId} also asks (accepting dismisses these):\n${artifact.questions.map((q) => `${q.id}. ${q.text}`).join('\n')}`
          : ''
      }`,
      tone: 'step',
    },
  ]);
}

/**
 * While a fan-out works: the workers writing at once, by their snapshot (undefined: no fan-out runs).
 *
 * @example
 * teamRunningLabel(snapshot); // 'Workers north, south, east writing at once'
 */
export function teamRunningLabel(snapshot: { value: unknown; context: SessionContext }): string | undefined {
  if (!stateString(snapshot.value).startsWith('running.team')) return undefined;
  const running = (snapshot.context.team?.branches ?? []).filter((b) => b.status === 'running').map((b) => b.step.workerId);
  if (running.length === 0) return undefined;
  return running.length === 1 ? `Worker ${running[0]} writing (the rest of its team is done)` : `Workers ${running.join(', ')} writing at once`;
}
