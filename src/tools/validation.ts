/**
 * The seed's six validation rules, one function each. Each returns `null` when the call
 * passes, else the message the model gets as the call's tool result: what was wrong and how
 * to fix it. The statechart names each rule as a guard (see session.machine.ts).
 */
import type { QueuedCall } from './reply.js';
import { findTool, toolsFor, userActionNames, type ToolActor } from './schemas.js';

/** What the rules need to know about a worker of the package (a skill without its prompt). */
export interface WorkerInfo {
  id: string;
  title: string;
  description: string;
  inputTags: string[];
  outputTags: string[];
  roles: { id: string; description: string }[];
}

const names = (list: readonly { name: string }[]) => list.map((t) => t.name).join(', ');

/** Rule 1: the tool exists for this actor (a manager cannot submit or accept; a worker cannot run_worker). */
export function checkActorMayUseTool(actor: ToolActor, queued: QueuedCall): string | null {
  const name = queued.call.function.name;
  if (findTool(actor, name)) return null;
  const available = `Tools available to the ${actor}: ${names(toolsFor(actor))}.`;
  if ((userActionNames as readonly string[]).includes(name)) {
    return `"${name}" is the user's action, not a tool: only the user approves, rejects or accepts. ${available}`;
  }
  const other: ToolActor = actor === 'manager' ? 'worker' : 'manager';
  if (findTool(other, name)) {
    return `"${name}" is a ${other} tool; the ${actor} may not call it. ${available}`;
  }
  return `There is no tool named "${name}". ${available}`;
}

/** Rule 2: the arguments are JSON and match the tool's schema. */
export function checkArgumentsMatchSchema(actor: ToolActor, queued: QueuedCall): string | null {
  const tool = findTool(actor, queued.call.function.name);
  if (!tool) return null; // rule 1 reports it
  if (queued.parseError !== undefined) {
    return `The arguments of ${tool.name} are not valid JSON (${queued.parseError}). Send a JSON object matching the tool's schema.`;
  }
  const result = tool.schema.safeParse(queued.args);
  if (result.success) return null;
  const problems = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`).join('; ');
  return `Invalid arguments for ${tool.name}: ${problems}. Fix them and call ${tool.name} again.`;
}

/** Rule 3: `run_worker.workerId` is in the package's registry (and `roleId` is one of its roles). */
export function checkWorkerIsRegistered(queued: QueuedCall, workers: readonly WorkerInfo[]): string | null {
  if (queued.call.function.name !== 'run_worker') return null;
  const { workerId, roleId } = queued.args as { workerId: string; roleId?: string };
  const worker = workers.find((w) => w.id === workerId);
  if (!worker) {
    const known = workers.map((w) => w.id).join(', ') || '(none: this session has no package)';
    return `Unknown workerId "${workerId}". Workers of this package: ${known}. Call list_workers for their tags.`;
  }
  if (roleId !== undefined && !worker.roles.some((r) => r.id === roleId)) {
    const roles = worker.roles.map((r) => r.id).join(', ');
    return roles
      ? `Worker "${workerId}" has no role "${roleId}". Its roles: ${roles}; or leave roleId out.`
      : `Worker "${workerId}" declares no roles; leave roleId out.`;
  }
  return null;
}

/** Rule 4: every tag of a `submit` is one of the worker's declared `outputTags`. */
export function checkTagsWithinOutputTags(queued: QueuedCall, outputTags: readonly string[]): string | null {
  if (queued.call.function.name !== 'submit') return null;
  const { outputs } = queued.args as { outputs: Record<string, string> };
  const undeclared = Object.keys(outputs).filter((tag) => !outputTags.includes(tag));
  if (undeclared.length === 0) return null;
  return `You may only write your declared output tags (${outputTags.join(', ')}); not ${undeclared.map((t) => `"${t}"`).join(', ')}. Submit again with only those tags.`;
}

/** Rule 5: the manager does not pass `inputTags` / `outputTags`: the runtime reads them from the skill. */
export function checkManagerOmitsTagLists(actor: ToolActor, queued: QueuedCall): string | null {
  if (actor !== 'manager' || queued.call.function.name !== 'run_worker') return null;
  const args = queued.args;
  if (!args || typeof args !== 'object') return null;
  const passed = ['inputTags', 'outputTags', 'inputKeys', 'outputKeys'].filter((k) => k in args);
  if (passed.length === 0) return null;
  return `Do not pass ${passed.join(' or ')} to run_worker: the runtime reads a worker's tags from its skill. Call run_worker again with only workerId, reason, requiresApproval and optionally roleId.`;
}

/** Rule 6: another LLM round is allowed only while the burst is below maxBurst. */
export function burstWithinLimit(burst: number, maxBurst: number): boolean {
  return burst < maxBurst;
}

export function burstLimitNotice(maxBurst: number): string {
  return `The agents used all ${maxBurst} rounds allowed between two user actions (maxBurst) without reaching a point where you are needed. Nothing was lost: say how to continue, and the burst starts again from 0.`;
}
