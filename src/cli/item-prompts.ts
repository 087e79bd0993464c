/**
 * The interactive `steward run` deciding one step or one artifact: "Edit, then approve" and
 * "Edit, then accept" (for a single step or artifact too), and a fan-out's items asked about
 * in turn — each proposed step (approve, edit then approve, reject), then each artifact under
 * review (accept, edit then accept, reject with a reason the manager reads). Each returns the
 * event to send, or undefined when the person quits; the loop asks again for the next item.
 */
import * as p from '@clack/prompts';
import type { UserEvent } from '../core/machines/session.events.js';
import { proposedItems, reviewedItems } from '../core/team-items.js';
import type { ArtifactView, SessionView } from '../core/view.js';
import type { SkillPackage } from '../skills/index.js';
import { safeLine } from '../text/safe-text.js';
import { QUIT } from './tool-prompts.js';

const quitOption = { value: QUIT, label: 'Quit for now', hint: 'the session is saved' };

/** The step as a person edits it: a proposed step, or one item of a fan-out (`item`). */
export interface StepToEdit {
  workerId: string;
  reason: string;
  roleId?: string;
  item?: string;
}

/** Opens text in the user's editor and returns what was saved. */
export type EditText = (text: string, name: string) => Promise<string | undefined>;

/**
 * "Edit, then approve": a new reason (prefilled with the manager's) and, if the worker has roles, a role.
 *
 * @example
 * const event = await editThenApprove(view.pendingStep!, view.packageId, packages); // { type: 'user_approved_next_step', edits: { reason } }
 */
export async function editThenApprove(step: StepToEdit, packageId: string | null, packages: ReadonlyMap<string, SkillPackage>): Promise<UserEvent | undefined> {
  const reason = await p.text({
    message: safeLine(`The worker's task${step.item !== undefined ? ` (${step.workerId})` : ''} (edit the manager's reason)`),
    initialValue: step.reason,
    validate: (v: string | undefined) => (v?.trim() ? undefined : 'Write the task (Ctrl-C to quit).'),
  });
  if (p.isCancel(reason)) return undefined;
  const roles = (packageId ? packages.get(packageId) : undefined)?.workers.find((w) => w.id === step.workerId)?.roles ?? [];
  let roleId: string | undefined = step.roleId;
  if (roles.length) {
    const chosen = await p.select<string>({
      message: 'Which role?',
      initialValue: step.roleId ?? '',
      options: [{ value: '', label: '(no role)' }, ...roles.map((r) => ({ value: r.id, label: safeLine(r.id), hint: safeLine(r.description).slice(0, 60) }))],
    });
    if (p.isCancel(chosen)) return undefined;
    roleId = chosen || undefined;
  }
  const edits = {
    ...(reason.trim() !== step.reason ? { reason: reason.trim() } : {}),
    ...(roleId !== undefined && roleId !== step.roleId ? { roleId } : {}),
  };
  return { type: 'user_approved_next_step', ...(step.item !== undefined ? { item: step.item } : {}), ...(Object.keys(edits).length ? { edits } : {}) };
}

/**
 * "Edit, then accept": one tag's body opened in the editor; an unchanged body is no edit.
 *
 * @example
 * const event = await editThenAccept(view.artifact!, options.editText!); // { type: 'user_accepted_artifact', artifactId, edits? }
 */
export async function editThenAccept(artifact: ArtifactView, editText: EditText): Promise<UserEvent | undefined> {
  let tag = artifact.tags[0]?.tag;
  if (artifact.tags.length > 1) {
    const chosen = await p.select<string>({
      message: 'Which tag?',
      options: artifact.tags.map((t) => ({ value: t.tag, label: safeLine(t.tag), hint: `v${t.version}` })),
    });
    if (p.isCancel(chosen)) return undefined;
    tag = chosen;
  }
  const current = artifact.tags.find((t) => t.tag === tag);
  if (!current) return undefined;
  const edited = await editText(current.body, current.tag);
  if (edited === undefined) {
    p.log.warn('The editor did not save a body: nothing was sent.');
    return undefined;
  }
  const changed = edited !== current.body;
  if (!changed) p.log.info('The body is unchanged: accepting it as the worker wrote it.');
  return { type: 'user_accepted_artifact', artifactId: artifact.id, ...(changed ? { edits: Object.fromEntries([[current.tag, edited]]) } : {}) };
}

/** An optional reason; undefined when the person quits, '' when they gave none. */
async function optionalReason(message: string): Promise<string | undefined> {
  const reason = await p.text({ message, placeholder: '(optional: Enter to skip)' });
  if (p.isCancel(reason)) return undefined;
  return reason?.trim() ?? '';
}

/**
 * approve_step of a fan-out: the first proposed step, decided on its own (the loop asks about the next).
 *
 * @example
 * if (proposedItems(view).length) return askTeamStep(view, options.packages);
 */
export async function askTeamStep(view: SessionView, packages: ReadonlyMap<string, SkillPackage>): Promise<UserEvent | undefined> {
  const proposed = proposedItems(view);
  const item = proposed[0];
  if (!item) return undefined;
  const worker = safeLine(item.workerId);
  const choice = await p.select<string>({
    message: safeLine(`Step ${item.item}: run ${item.workerId}${proposed.length > 1 ? ` (1 of ${proposed.length} waiting)` : ''} · ${item.reason}`),
    options: [
      { value: 'approve', label: `Approve ${worker}`, hint: 'it runs with the others once every step is decided' },
      { value: 'edit', label: 'Edit, then approve', hint: 'change the reason or the role first' },
      { value: 'reject', label: `Reject ${worker}`, hint: 'it does not run; the manager is told why' },
      quitOption,
    ],
  });
  if (p.isCancel(choice) || choice === QUIT) return undefined;
  if (choice === 'approve') return { type: 'user_approved_next_step', item: item.item };
  if (choice === 'edit') return editThenApprove(item, view.packageId, packages);
  const reason = await optionalReason('Why? (the manager is told)');
  if (reason === undefined) return undefined;
  return { type: 'user_rejected_next_step', item: item.item, ...(reason ? { reason } : {}) };
}

/**
 * review_artifact of a fan-in: the first artifact under review, decided on its own. A rejection
 * has no revision of its own here: the manager reads the reason and decides what to do.
 *
 * @example
 * if (reviewedItems(view).length) return askTeamArtifact(view, options.editText);
 */
export async function askTeamArtifact(view: SessionView, editText: EditText | undefined): Promise<UserEvent | undefined> {
  const reviewed = reviewedItems(view);
  const first = reviewed[0];
  if (!first) return undefined;
  const { artifact } = first;
  const choice = await p.select<string>({
    message: safeLine(`Artifact ${artifact.id} by ${artifact.workerId}${reviewed.length > 1 ? ` (1 of ${reviewed.length} under review)` : ''}`),
    options: [
      { value: 'accept', label: `Accept ${artifact.id}`, hint: safeLine(artifact.workerId) },
      ...(editText ? [{ value: 'edit', label: 'Edit, then accept', hint: 'change a body in $EDITOR first' }] : []),
      { value: 'reject', label: `Reject ${artifact.id}`, hint: 'the manager reads why and decides what to do' },
      quitOption,
    ],
  });
  if (p.isCancel(choice) || choice === QUIT) return undefined;
  if (choice === 'accept') return { type: 'user_accepted_artifact', artifactId: artifact.id };
  if (choice === 'edit') return editThenAccept(artifact, editText!);
  const reason = await optionalReason(`Why reject ${artifact.id}? (the manager reads it)`);
  if (reason === undefined) return undefined;
  return { type: 'user_rejected_artifact', artifactId: artifact.id, ...(reason ? { reason } : {}) };
}
