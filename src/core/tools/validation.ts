/**
 * The tool contract's validation rules, one function each. Each returns `null` when the call passes,
 * else a finding: the message the model gets as the call's tool result (what was wrong and
 * how to fix it) and the facts behind it as data. The rule table (src/core/machines/rules.ts)
 * names each rule, says which actors it applies to and turns a finding into a violation.
 */
import type { QueuedCall } from './reply.js';
import { findTool, toolsFor, userActionNames, type RunWorkerArgs, type SubmitArgs, type ToolActor } from './schemas.js';

/** What the rules need to know about a worker of the package (a skill without its prompt). */
export interface WorkerInfo {
  id: string;
  title: string;
  description: string;
  inputTags: string[];
  outputTags: string[];
  roles: { id: string; description: string }[];
}

/** Why a call breaks a rule: the model's message and the facts an app may render itself. */
export interface Finding {
  message: string;
  data: Record<string, unknown>;
}

const names = (list: readonly { name: string }[]) => list.map((t) => t.name);

/**
 * Rule 1: the tool exists for this actor (a manager cannot submit or accept; a worker cannot
 * run_worker). `serverTools`: the MCP tools offered to the actor, by the names the model calls.
 */
export function checkActorMayUseTool(actor: ToolActor, queued: QueuedCall, serverTools: readonly string[] = []): Finding | null {
  const tool = queued.call.function.name;
  if (findTool(actor, tool) || serverTools.includes(tool)) return null;
  const available = [...names(toolsFor(actor)), ...serverTools];
  const data = { tool, actor, available };
  const list = `Tools available to the ${actor}: ${available.join(', ')}.`;
  if ((userActionNames as readonly string[]).includes(tool)) {
    return { message: `"${tool}" is the user's action, not a tool: only the user approves, rejects or accepts. ${list}`, data };
  }
  const other: ToolActor = actor === 'manager' ? 'worker' : 'manager';
  if (findTool(other, tool)) return { message: `"${tool}" is a ${other} tool; the ${actor} may not call it. ${list}`, data };
  return { message: `There is no tool named "${tool}". ${list}`, data };
}

/** Rule 2: the arguments are JSON and match the tool's schema. */
export function checkArgumentsMatchSchema(actor: ToolActor, queued: QueuedCall): Finding | null {
  const tool = findTool(actor, queued.call.function.name);
  if (!tool) return null; // rule 1 reports it
  if (queued.parseError !== undefined) {
    return {
      message: `The arguments of ${tool.name} are not valid JSON (${queued.parseError}). Send a JSON object matching the tool's schema.`,
      data: { tool: tool.name, parseError: queued.parseError },
    };
  }
  const result = tool.schema.safeParse(queued.args);
  if (result.success) return null;
  const issues = result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const problems = issues.map((i) => `${i.path || '(arguments)'}: ${i.message}`).join('; ');
  return { message: `Invalid arguments for ${tool.name}: ${problems}. Fix them and call ${tool.name} again.`, data: { tool: tool.name, issues } };
}

/**
 * Rule 2 for an MCP tool: the arguments are a JSON object and match the tool's input schema.
 * The schema is checked outside the core, with the MCP SDK's validator, by the worker's turn:
 * `schemaError` is its message.
 */
export function checkServerToolArguments(queued: QueuedCall, schemaError: string | undefined): Finding | null {
  const tool = queued.call.function.name;
  const problem =
    queued.parseError !== undefined
      ? `are not valid JSON (${queued.parseError})`
      : queued.args === null || typeof queued.args !== 'object' || Array.isArray(queued.args)
        ? 'are not a JSON object'
        : null;
  if (problem !== null) return { message: `The arguments of ${tool} ${problem}. Fix them and call ${tool} again.`, data: { tool, problem } };
  // The validator's own message: it names the field and the fix.
  return schemaError === undefined ? null : { message: schemaError, data: { tool, problem: schemaError } };
}

/** Rule 3: `run_worker.workerId` is in the package's registry (and `roleId` is one of its roles). */
export function checkWorkerIsRegistered(queued: QueuedCall, workers: readonly WorkerInfo[]): Finding | null {
  if (queued.call.function.name !== 'run_worker') return null;
  // Checked after rule 2 (the order of the chart's checking edges), so the arguments are what the schema describes.
  const { workerId, roleId } = queued.args as RunWorkerArgs;
  const worker = workers.find((w) => w.id === workerId);
  if (!worker) {
    const known = workers.map((w) => w.id);
    return {
      message:
        `Unknown workerId "${workerId}". Workers of this package: ` +
        `${known.join(', ') || '(none: this session has no package)'}. Call list_workers for their tags.`,
      data: { workerId, known },
    };
  }
  if (roleId !== undefined && !worker.roles.some((r) => r.id === roleId)) {
    const roles = worker.roles.map((r) => r.id);
    return {
      message: roles.length
        ? `Worker "${workerId}" has no role "${roleId}". Its roles: ${roles.join(', ')}; or leave roleId out.`
        : `Worker "${workerId}" declares no roles; leave roleId out.`,
      data: { workerId, roleId, roles },
    };
  }
  return null;
}

/** Rule 4: every tag of a `submit` is one of the worker's declared `outputTags`. */
export function checkTagsWithinOutputTags(queued: QueuedCall, outputTags: readonly string[]): Finding | null {
  if (queued.call.function.name !== 'submit') return null;
  // Checked after rule 2 (the order of the chart's checking edges), so the arguments are what the schema describes.
  const undeclared = Object.keys((queued.args as SubmitArgs).outputs).filter((tag) => !outputTags.includes(tag));
  if (undeclared.length === 0) return null;
  return {
    message:
      `You may only write your declared output tags (${outputTags.join(', ')}); not ` +
      `${undeclared.map((t) => `"${t}"`).join(', ')}. Submit again with only those tags.`,
    data: { undeclared, outputTags: [...outputTags] },
  };
}

/** Rule 5: the manager does not pass `inputTags` / `outputTags`: the runtime reads them from the skill. */
export function checkManagerOmitsTagLists(actor: ToolActor, queued: QueuedCall): Finding | null {
  if (actor !== 'manager' || queued.call.function.name !== 'run_worker') return null;
  const args = queued.args;
  if (!args || typeof args !== 'object') return null;
  const passed = ['inputTags', 'outputTags', 'inputKeys', 'outputKeys'].filter((k) => Object.hasOwn(args, k));
  if (passed.length === 0) return null;
  return {
    message:
      `Do not pass ${passed.join(' or ')} to run_worker: the runtime reads a worker's tags from its ` +
      `skill. Call run_worker again with only workerId, reason, requiresApproval and optionally roleId.`,
    data: { passed },
  };
}

/** Rule 6: another LLM round is allowed only while the burst is below maxBurst. */
export function checkBurstWithinLimit(burst: number, maxBurst: number): Finding | null {
  return burst < maxBurst ? null : { message: burstLimitNotice(maxBurst), data: { burst, maxBurst } };
}

export function burstLimitNotice(maxBurst: number): string {
  return (
    `The agents used all ${maxBurst} rounds allowed between two user actions (maxBurst) without ` +
    `reaching a point where you are needed. Nothing was lost: say how to continue, and the burst starts ` +
    `again from 0.`
  );
}
