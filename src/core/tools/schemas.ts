/**
 * The tools of the contract, one strict zod object each. The JSON Schemas the model sees are
 * generated from these same objects, so what the model is told and what is checked never drift.
 */
// A namespace import: bundlers drop the parts of zod that are not used (the `z` object would keep all of it).
import * as z from 'zod';
import { ownRecord, ownRecordJsonSchema } from '../blackboard/keyed.js';
import { boundedString, DEFAULT_LIMITS as L } from '../limits.js';
import type { ToolSpec } from '../models/model.js';

const tagName = z.string().min(1).max(120);
/** Every free text a model sends (bodies, reasons, messages) has the artifact-body bound. */
const text = () => boundedString(L.artifactBodyChars, 'artifactBodyChars');

/**
 * The whole arguments object stays under `toolArgumentsChars` as JSON: many fields, each
 * under its own bound, could still add up to more than a prompt should carry.
 */
function bounded<T extends z.ZodType>(schema: T): T {
  return schema.check((ctx) => {
    const size = JSON.stringify(ctx.value)?.length ?? 0;
    if (size > L.toolArgumentsChars) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: `the arguments are ${size} characters as JSON, more than the ${L.toolArgumentsChars}-character limit (toolArgumentsChars): send less`,
      });
    }
  }) as T;
}

export const ReadBlackboardArgs = z.strictObject({
  tags: z.array(tagName).min(1).max(32).describe('Tags to read, e.g. ["brief", "outline"]. Each returns its latest version.'),
  version: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Read this older version of each tag instead of the latest (version numbers are in the index and list_artifacts).'),
});
export const ListWorkersArgs = z.strictObject({});
export const ListArtifactsArgs = z.strictObject({});
export const RunWorkerArgs = z.strictObject({
  workerId: z.string().min(1).max(120).describe('The id of a worker from list_workers.'),
  reason: text().min(1).describe('What this run should achieve; the worker reads it.'),
  requiresApproval: z.boolean().describe('true: the user approves the step before it runs.'),
  roleId: z.string().min(1).max(120).optional().describe("One of the worker's roles, when it declares any."),
});
export const ManagerAskUserArgs = z.strictObject({
  message: text().optional().describe('What to tell or ask the user.'),
  assessment: text().optional().describe('Your evaluation of the work so far, shown as the main content.'),
  questions: z.array(text().min(1)).max(10).optional().describe('Short questions shown as a card the user may answer or skip.'),
});
export const ReviewBlackboardArgs = z.strictObject({
  message: text().optional().describe('A note shown above the overview of the blackboard.'),
});
export const FinishArgs = z.strictObject({
  summary: text().optional().describe('A closing summary for the user.'),
});
export const SubmitArgs = z.strictObject({
  // ownRecord, not z.record: zod drops a "__proto__" key unchecked, and a tag may be named so.
  outputs: ownRecord(tagName, text(), { error: 'outputs must be an object of tag → Markdown body' })
    .refine((o) => Object.keys(o).length > 0, 'outputs must hold at least one tag')
    .refine((o) => Object.keys(o).length <= L.tagsPerSubmit, {
      message: `more than ${L.tagsPerSubmit} tags in one submit (the tagsPerSubmit limit): submit only your output tags`,
    })
    .describe('Your results: one entry per output tag, the value is the Markdown body.'),
});
export const WorkerAskUserArgs = z.strictObject({
  questions: z.array(text().min(1)).min(1).max(10).describe('Questions the user must answer before you can produce anything useful.'),
});

export type ReadBlackboardArgs = z.infer<typeof ReadBlackboardArgs>;
export type RunWorkerArgs = z.infer<typeof RunWorkerArgs>;
export type ManagerAskUserArgs = z.infer<typeof ManagerAskUserArgs>;
export type ReviewBlackboardArgs = z.infer<typeof ReviewBlackboardArgs>;
export type FinishArgs = z.infer<typeof FinishArgs>;
export type SubmitArgs = z.infer<typeof SubmitArgs>;
export type WorkerAskUserArgs = z.infer<typeof WorkerAskUserArgs>;

export type ToolKind = 'loop' | 'boundary';
export type ToolActor = 'manager' | 'worker';

export interface ToolDefinition {
  name: string;
  actor: ToolActor;
  kind: ToolKind;
  description: string;
  schema: z.ZodType;
}

export const managerTools = [
  {
    name: 'read_blackboard',
    actor: 'manager',
    kind: 'loop',
    schema: bounded(ReadBlackboardArgs),
    description: 'Read the latest body of blackboard tags, or an older version with `version`. The prompt only shows an index; read what you need.',
  },
  {
    name: 'list_workers',
    actor: 'manager',
    kind: 'loop',
    schema: ListWorkersArgs,
    description: "List the package's workers with their input and output tags and roles.",
  },
  {
    name: 'list_artifacts',
    actor: 'manager',
    kind: 'loop',
    schema: ListArtifactsArgs,
    description: 'List the artifacts produced so far and their review status.',
  },
  {
    name: 'run_worker',
    actor: 'manager',
    kind: 'boundary',
    schema: bounded(RunWorkerArgs),
    description: 'Run a worker. Its input and output tags come from its skill; do not pass them. Ends your turn.',
  },
  {
    name: 'ask_user',
    actor: 'manager',
    kind: 'boundary',
    schema: bounded(ManagerAskUserArgs),
    description: 'Talk to the user and wait for their input: a message, an assessment, optional questions. Ends your turn.',
  },
  {
    name: 'review_blackboard',
    actor: 'manager',
    kind: 'boundary',
    schema: bounded(ReviewBlackboardArgs),
    description: 'Show the user an overview of the blackboard and wait for their input. Ends your turn.',
  },
  { name: 'finish', actor: 'manager', kind: 'boundary', schema: bounded(FinishArgs), description: 'The work is complete: end the session with a summary.' },
] as const satisfies readonly ToolDefinition[];

export const workerTools = [
  {
    name: 'submit',
    actor: 'worker',
    kind: 'boundary',
    schema: bounded(SubmitArgs),
    description: 'Submit your results for your output tags. The user reviews them.',
  },
  {
    name: 'ask_user',
    actor: 'worker',
    kind: 'boundary',
    schema: bounded(WorkerAskUserArgs),
    description: 'Ask the user questions you need answered. Before a submit: you wait for answers. Together with a submit: they ride along with the review.',
  },
] as const satisfies readonly ToolDefinition[];

/** Names that belong to the user, never to a model: calling them is a rule-1 refusal. */
export const userActionNames = [
  'submit_input',
  'approve',
  'reject',
  'accept',
  'user_submitted_input',
  'user_confirmed_intake',
  'user_approved_next_step',
  'user_rejected_next_step',
  'user_accepted_artifact',
  'user_rejected_artifact',
  'user_answered_questions',
  'user_skipped_questions',
  'user_selected_package',
] as const;

export function toolsFor(actor: ToolActor): readonly ToolDefinition[] {
  return actor === 'manager' ? managerTools : workerTools;
}

export function findTool(actor: ToolActor, name: string): ToolDefinition | undefined {
  return toolsFor(actor).find((t) => t.name === name);
}

function toSpec(tool: ToolDefinition): ToolSpec {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.schema, { unrepresentable: 'any', override: ownRecordJsonSchema }) as Record<
    string,
    unknown
  >;
  return { name: tool.name, description: tool.description, parameters };
}

/** JSON Schemas for the model, built once: they never change at run time. */
export const managerToolSpecs: readonly ToolSpec[] = managerTools.map(toSpec);
export const workerToolSpecs: readonly ToolSpec[] = workerTools.map(toSpec);
