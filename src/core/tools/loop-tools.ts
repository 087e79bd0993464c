/**
 * The manager's loop tools: read-only views of the session whose text is appended to the
 * manager's messages as the call's result. Pure functions of the data they are given.
 */
import type { Artifact } from '../blackboard/artifacts.js';
import { InternalError } from '../errors.js';
import { latest, REQUEST_TAG, requestText, hasVersion, versionOf, type Blackboard, type TagVersion } from '../blackboard/blackboard.js';
import type { ReadBlackboardArgs } from './schemas.js';
import type { WorkerInfo } from './validation.js';

export interface LoopToolData {
  blackboard: Blackboard;
  workers: readonly WorkerInfo[];
  artifacts: readonly Artifact[];
  /** Archived versions the manager's turn fetched for this reply (see src/core/agents/turns.ts). */
  attachments?: readonly { tag: string; version: TagVersion }[];
}

/** A version's body from the context, else from what the turn fetched from the archive. */
function bodyOf(data: LoopToolData, tag: string, version: number): TagVersion | undefined {
  return versionOf(data.blackboard, tag, version) ?? data.attachments?.find((a) => a.tag === tag && a.version.version === version)?.version;
}

export function readBlackboard(args: ReadBlackboardArgs, data: LoopToolData): string {
  return args.tags
    .map((tag) => {
      const v = latest(data.blackboard, tag);
      if (!v) {
        const known = Object.keys(data.blackboard).join(', ') || '(the blackboard is empty)';
        return `## ${tag}\n(no such tag; tags on the blackboard: ${known})`;
      }
      if (args.version !== undefined && args.version !== v.version) {
        if (!hasVersion(data.blackboard, tag, args.version)) return `## ${tag}\n(no version ${args.version}; versions are 1 to ${v.version})`;
        const old = bodyOf(data, tag, args.version);
        if (!old) return `## ${tag}\n(version ${args.version} could not be read from the session's archive)`;
        return `## ${tag} (v${old.version}, by ${old.writtenBy})\n${old.body}`;
      }
      // The request is in parts (the request, then each answer in intake): all of them.
      if (tag === REQUEST_TAG && args.version === undefined && v.version > 1)
        return `## ${tag} (v1–v${v.version}, by ${v.writtenBy})\n${requestText(data.blackboard, data.attachments)}`;
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
      const tags = Object.entries(a.tags)
        .map(([t, v]) => `${t} v${v}`)
        .join(', ');
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
      throw new InternalError(`runLoopTool: "${name}" is not a loop tool.`);
  }
}
