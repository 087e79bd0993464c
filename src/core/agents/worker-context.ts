/**
 * A worker's prompt (DESIGN §5): its skill prompt, then a brief assembled from the session —
 * the bodies of its inputTags, the manager's reason and role, revision notes and its previous
 * artifact when revising — then its own conversation (questions asked, answers given), the
 * bounded window the context keeps of it.
 */
import { latest, REQUEST_TAG, requestText, versionOf } from '../blackboard/blackboard.js';
import type { SessionContext } from '../machines/session.context.js';
import { omittedNote } from '../machines/transcript.js';
import type { ChatMessage } from '../models/model.js';
import type { TurnAttachments } from '../machines/session.context.js';
import type { WorkerInfo } from '../tools/validation.js';

const WORKER_RULES = `## How to reply
- Call submit with outputs: one entry per output tag you are asked to write, the value is Markdown.
- Call ask_user with questions only if you cannot produce anything useful without the answers.
- You may call ask_user together with submit: the questions then ride along with your artifact.`;

/** `fetched`: the request's earlier parts, read from the archive by the worker's turn. */
export function workerBrief(context: SessionContext, worker: WorkerInfo, fetched?: TurnAttachments): string {
  const step = context.step!;
  const parts: string[] = [`# Your task\n${step.reason}`];
  if (step.roleId) {
    const role = worker.roles.find((r) => r.id === step.roleId);
    parts.push(`## Role: ${step.roleId}\n${role?.description ?? ''}`);
  }
  for (const tag of worker.inputTags) {
    const v = latest(context.blackboard, tag);
    // The request is in parts (the request, then each answer in intake): all of them.
    const body = tag === REQUEST_TAG ? requestText(context.blackboard, fetched?.versions) : v?.body;
    parts.push(v ? `## Input "${tag}" (v${v.version})\n${body}` : `## Input "${tag}"\n(not written yet)`);
  }
  if (step.revises) {
    const previous = context.artifacts.find((a) => a.id === step.revises);
    const bodies = previous
      ? Object.entries(previous.tags)
          .map(([tag, version]) => `### ${tag} (v${version})\n${versionOf(context.blackboard, tag, version)?.body ?? ''}`)
          .join('\n\n')
      : '';
    parts.push(
      `## Revision\nThe user rejected your previous artifact ${step.revises}. Their notes:\n${step.revisionNotes ?? '(no notes)'}\n\nYour previous version:\n${bodies}`,
    );
  }
  parts.push(`## Output tags\n${worker.outputTags.join(', ')}`);
  parts.push(WORKER_RULES);
  return parts.join('\n\n');
}

export function workerMessages(context: SessionContext, worker: WorkerInfo, skillPrompt: string, fetched?: TurnAttachments): ChatMessage[] {
  return [
    { role: 'system', content: skillPrompt },
    { role: 'user', content: workerBrief(context, worker, fetched) },
    ...omittedNote(context.transcripts.worker, 'your brief above is complete and current.'),
    ...context.transcripts.worker.messages,
  ];
}
