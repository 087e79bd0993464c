/**
 * The approval policy: who decides whether a proposed worker run waits for a person. The
 * worker's front matter says `approval: always | never | model` (default `model`: the
 * manager's `requiresApproval` decides, as the tool contract has it); a deployment can
 * override it per step with `createRuntime({ approval })`. The answer for a step is fixed
 * when the step is proposed and kept in it (`Step.approval`), so the chart's guard
 * `stepNeedsApproval` reads data, and the message the manager gets, the view's reason and
 * the docs all come from this file.
 */
import type { ApprovalPolicy } from '../skills/package-schema.js';
import type { Step } from './session.context.js';

export type { ApprovalPolicy };

/** Why a step waits in `approve_step`: the deployment's policy, or the manager asked. */
export type ApprovalRequiredBy = 'policy' | 'model';

/** The step as the manager proposed it, with the policy of its worker's front matter, as `createRuntime({ approval })` is asked about it. */
export type ProposedStep = Pick<Step, 'workerId' | 'reason' | 'roleId' | 'requiresApproval'> & {
  /** The worker's front matter `approval` (default `model`). */
  approval: ApprovalPolicy;
};

/** Whether a person approves `step` before it runs: the policy says so, or it leaves the choice to the manager and the manager asked. */
export function stepNeedsApproval(step: Step): boolean {
  const policy = step.approval;
  return policy === 'always' || (policy === 'model' && step.requiresApproval);
}

/**
 * Why a step that waits for approval waits: `model` only when the policy left it to the
 * manager and the manager asked; otherwise the deployment's rule (its policy, or a guard
 * swapped with `provide()`).
 */
export function approvalRequiredBy(step: Step): ApprovalRequiredBy {
  return step.approval === 'model' && step.requiresApproval ? 'model' : 'policy';
}

const PROPOSED = 'Proposed to the user; you will hear whether they approved it.';
const RUNNING = 'The worker is running; you will hear when the user has reviewed its artifact.';

/**
 * The tool result of the manager's run_worker call, once the chart has sent the step on
 * (`waits`: to approve_step). When what happens is not what the manager asked for, it says
 * so and why, so the manager's transcript stays true.
 */
export function runWorkerResult(step: Step, waits: boolean): string {
  if (waits === step.requiresApproval) return waits ? PROPOSED : RUNNING;
  const policy = step.approval;
  const rule = policy === 'model' ? "this deployment's rules decide it" : `the approval policy for worker "${step.workerId}" is "${policy}"`;
  return waits
    ? `A person must approve this step before it runs (${rule}), although you asked for no approval. ${PROPOSED}`
    : `This step runs without a person's approval (${rule}), although you asked for one. ${RUNNING}`;
}

/**
 * Why a step waits, in words, as the CLI and the inspector print it.
 *
 * @example
 * approvalReasonText({ ...step, approval: 'always' }, 'policy'); // 'required by the approval policy ("always" for echo)'
 */
export function approvalReasonText(step: Step, requiredBy: ApprovalRequiredBy): string {
  if (requiredBy === 'model') return 'asked for by the manager';
  return step.approval === 'model' ? "required by this deployment's rules" : `required by the approval policy ("${step.approval}" for ${step.workerId})`;
}
