/**
 * The deployment's approval policy, asked by the manager's turn: for each run_worker call of
 * the reply, `createRuntime({ approval })` answers always, never or model, and the answers
 * ride on the turn's output (`approvals`). The chart reads them when the step is proposed, so
 * its transitions stay pure, and the journal keeps them with the reply: a replay or a fork
 * sees the answers given then, whatever the function says today.
 */
import { UserError } from '../errors.js';
import type { ProposedStep } from '../machines/approval.js';
import type { SessionContext, StepApproval, TurnOutput } from '../machines/session.context.js';
import { queuedReply } from '../machines/session.updates.js';
import type { ModelReply } from '../models/model.js';
import { ApprovalPolicySchema, type ApprovalPolicy } from '../skills/package-schema.js';
import { RunWorkerArgs } from '../tools/schemas.js';

/**
 * Decides, per proposed step, who decides whether it waits for a person: `always`, `never`, or
 * `model` (the manager's requiresApproval). `step.approval` is what the worker's front matter says.
 */
export type ApprovalRule = (step: ProposedStep, context: SessionContext) => ApprovalPolicy;

/** Whether the reply may hold a run_worker call (a tool call, or the manager's one-shot JSON decision in its content): most replies do not. */
function mayRunWorker(reply: ModelReply): boolean {
  const calls = Array.isArray(reply?.toolCalls) ? reply.toolCalls : [];
  if (calls.some((c) => c?.function?.name === 'run_worker')) return true;
  return calls.length === 0 && typeof reply?.content === 'string' && reply.content.includes('run_worker');
}

/**
 * The reply with the rule's answer for each of its run_worker calls whose arguments are valid
 * (the others are refused by the rules before any step is proposed).
 *
 * @example
 * const answered = withApprovals(context, reply, (step) => (step.workerId === 'publisher' ? 'always' : step.approval));
 */
export function withApprovals(context: SessionContext, reply: ModelReply, rule: ApprovalRule): TurnOutput {
  if (!mayRunWorker(reply)) return reply;
  const approvals: StepApproval[] = [];
  for (const { call, args } of queuedReply(context, 'manager', reply).queue) {
    if (call.function.name !== 'run_worker') continue;
    const parsed = RunWorkerArgs.safeParse(args);
    if (!parsed.success) continue;
    const { workerId, reason, requiresApproval, roleId } = parsed.data;
    const own = context.package?.workers.find((w) => w.id === workerId)?.approval ?? 'model';
    const step: ProposedStep = { workerId, reason, requiresApproval, approval: own, ...(roleId ? { roleId } : {}) };
    const answer = ApprovalPolicySchema.safeParse(rule(step, context));
    if (!answer.success)
      throw new UserError(
        `createRuntime({ approval }) answered something else than "always", "never" or "model" for run_worker(${workerId}): return one of them.`,
      );
    approvals.push({ callId: call.id, approval: answer.data });
  }
  return approvals.length ? { ...reply, approvals } : reply;
}
