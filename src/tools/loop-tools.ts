/**
 * The manager's loop tools: read-only views of the session whose text is appended to the
 * manager's messages as the call's result. Pure functions of the data they are given.
 */
import type { Artifact } from '../blackboard/artifacts.js';
import { latest, type Blackboard } from '../blackboard/blackboard.js';
import type { ReadBlackboardArgs } from './schemas.js';
import type { WorkerInfo } from './validation.js';

export interface LoopToolData {
  blackboard: Blackboard;
  workers: readonly WorkerInfo[];
  artifacts: readonly Artifact[];
}

export function readBlackboard(args: ReadBlackboardArgs, data: LoopToolData): string {
  return args.tags
    .map((tag) => {
      const v = latest(data.blackboard, tag);
      if (!v) {
        const known = Object.keys(data.blackboard).join(', ') || '(the blackboard is empty)';
        return `## ${tag}\n(no such tag; tags on the blackboard: ${known})`;
      }
      return `## ${tag} (v${v.version}, by ${v.writtenBy})\n${v.body}`;
    })
    .join('\n\n');
}

export function listWorkers(data: LoopToolData): string {
  if (data.workers.length === 0) return 'This session has no package, so there are no workers.';
  return data.workers
    .map((w) => {
      const roles = w.roles.length ? `; roles: ${w.roles.map((r) => `${r.id} (${r.description})`).join(', ')}` : '';
      return `- ${w.id}: ${w.description} [reads: ${w.inputTags.join(', ') || '-'}; writes: ${w.outputTags.join(', ')}${roles}]`;
    })
    .join('\n');
}

export function listArtifacts(data: LoopToolData): string {
  if (data.artifacts.length === 0) return 'No artifacts yet.';
  return data.artifacts
    .map((a) => {
      const tags = Object.entries(a.tags).map(([t, v]) => `${t} v${v}`).join(', ');
      const extra = [a.roleId && `role ${a.roleId}`, a.revises && `revises ${a.revises}`].filter(Boolean).join(', ');
      return `- ${a.id} by ${a.workerId}: ${a.status} (${tags})${extra ? ` [${extra}]` : ''}`;
    })
    .join('\n');
}

/** Runs a loop tool whose call already passed the validation rules. */
export function runLoopTool(name: string, args: unknown, data: LoopToolData): string {
  switch (name) {
    case 'read_blackboard':
      return readBlackboard(args as ReadBlackboardArgs, data);
    case 'list_workers':
      return listWorkers(data);
    case 'list_artifacts':
      return listArtifacts(data);
    default:
      throw new Error(`runLoopTool: "${name}" is not a loop tool (a bug in Steward).`);
  }
}
