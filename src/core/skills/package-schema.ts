/**
 * The skill package format. A package is a folder `packages/<id>/` holding a
 * `manifest.json` and one `workers/<workerId>.md` per worker (YAML front matter + the
 * worker's system prompt as the Markdown body).
 *
 * Every error message below is phrased to follow a field name ("field "x" must be …"):
 * the loader prefixes it with the file and the field, so authors read what to write.
 */
import * as z from 'zod';
import { strict } from './strict-object.js';
import { ownRecord } from '../blackboard/keyed.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { McpServersSchema, type McpServerConfig } from './mcp-servers.js';
import { DECISION_WAITS, DeadlinesSchema, DeciderGroupsSchema, type DeadlinePolicy } from '../machines/deadlines.js';

const MAX_WORKERS = DEFAULT_LIMITS.workersPerPackage;

/** The tag the runtime writes from the user's input; any worker may read it. */
export { REQUEST_TAG } from '../blackboard/blackboard.js';

/**
 * Short path-like names: `brief`, `outline`, `chapter.3`, `sceneList`. Names that
 * Object.prototype also has (`constructor`, `__proto__`, `toString`) are ordinary tags:
 * keyed data never looks up the prototype chain (src/core/blackboard/keyed.ts).
 */
export const TAG_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/** Package, worker and role ids: also folder and file names, so keep them plain. */
export const ID_PATTERN = /^[a-z][a-z0-9_-]*$/;

const TAG_HINT = 'a tag like "outline" or "chapter.3" (letters, digits, "-" or "_", dot-separated, starting with a letter or "_")';
const ID_HINT = 'an id like "brief-writer" (lowercase letters, digits, "-" or "_", starting with a letter)';

const text = (what: string) =>
  z
    .string({ error: `must be ${what}` })
    .trim()
    .min(1, { error: `must be ${what}, not empty` });

const id = () => z.string({ error: `must be ${ID_HINT}` }).regex(ID_PATTERN, { error: `must be ${ID_HINT}` });

const noDuplicates = (items: string[]) => new Set(items).size === items.length;

/** A worker's MCP tool: `server.tool`, or `server.*` for every tool of the server (server names as in the manifest's mcpServers). */
export const TOOL_REF_PATTERN = /^[a-z][a-z0-9_-]*\.([A-Za-z0-9_.-]{1,128}|\*)$/;
const TOOL_REF_HINT = '"server.tool" or "server.*", with a server of the manifest\'s mcpServers (e.g. "files.read_text_file")';
const MAX_TOOL_REFS = 64;

const RULE_EXAMPLE = '{ "after": "24h", "outcome": "reject" }';

/** DeadlinesSchema after a first check of the object's shape (own keys kept, "__proto__" too, so that it is refused by name). */
const deadlineRules = DeadlinesSchema as unknown as z.ZodType<DeadlinePolicy, Record<string, unknown>>;

/**
 * Deadlines by waiting reason (DeadlinesSchema's rules), with a message the author reads when
 * the value is not an object at all: the manifest's `deadlines`, `createRuntime({ deadlines })`.
 */
export const PackageDeadlinesSchema = ownRecord(z.string(), z.unknown(), { error: `must be an object of waiting reasons → a rule like ${RULE_EXAMPLE}` }).pipe(
  deadlineRules,
) as z.ZodType<DeadlinePolicy, unknown>;

/** The waits a worker's own `deadlines` may name: the decisions about it (its step, its artifact, its tool calls). */
const workerDeadlinesField = () =>
  ownRecord(z.string(), z.unknown(), { error: `must be an object of ${DECISION_WAITS.join(', ')} → a rule like ${RULE_EXAMPLE}` })
    .refine((policy) => Object.keys(policy).every((reason) => (DECISION_WAITS as readonly string[]).includes(reason)), {
      error: (issue) =>
        `names ${Object.keys(issue.input as object)
          .filter((reason) => !(DECISION_WAITS as readonly string[]).includes(reason))
          .map((reason) => `"${reason}"`)
          .join(', ')}: a worker's deadlines are for the decisions about it (${DECISION_WAITS.join(', ')}); ` +
        'put the deadlines of other waits in the manifest\'s "deadlines"',
    })
    .pipe(deadlineRules) as z.ZodType<DeadlinePolicy, unknown>;

export const TagSchema = z.string({ error: `must be ${TAG_HINT}` }).regex(TAG_PATTERN, { error: `must be ${TAG_HINT}` });

export const PackageManifestSchema = strict(
  {
    schemaVersion: z.literal(1, { error: 'must be 1 (the only package format this version of Steward reads)' }),
    id: id(),
    title: text('a short human-readable title'),
    description: text('1–3 sentences saying what kind of work this package produces'),
    workers: z
      .array(id(), { error: 'must be a non-empty array of worker ids in chain order, e.g. ["brief-writer", "outliner"]' })
      .min(1, { error: 'must be a non-empty array of worker ids in chain order, e.g. ["brief-writer", "outliner"]' })
      // The manager's prompt lists every worker: 10,000 of them made a 482k-character prompt.
      .max(MAX_WORKERS, {
        error: (issue) =>
          `lists ${Array.isArray(issue.input) ? issue.input.length : 'too many'} workers; the limit is ${MAX_WORKERS} (workersPerPackage): split the package into smaller ones`,
      })
      .refine(noDuplicates, { error: 'must not list the same worker twice' }),
    /** The MCP servers whose tools the package's workers may call (front matter `tools`), in the shape MCP hosts use. */
    mcpServers: McpServersSchema.optional(),
    /** Deadlines of the package's waits, by waiting reason (src/core/machines/deadlines.ts); a worker's own front matter wins for its waits. */
    deadlines: PackageDeadlinesSchema.optional(),
  },
  'a JSON object with schemaVersion, id, title, description, workers and optionally mcpServers and deadlines',
);

const RoleSchema = strict(
  {
    id: id(),
    description: text('one line saying how this role changes the worker'),
  },
  'an object { id, description }',
);

/**
 * Who decides whether a run of the worker waits for a person's approval: always (every run
 * waits), never (no run waits), model (the manager's run_worker `requiresApproval`, the
 * default). A deployment may override it per step (`createRuntime({ approval })`).
 */
export const ApprovalPolicySchema = z.enum(['always', 'never', 'model'], {
  error: 'must be "always" (a person approves every run), "never" (no run waits) or "model" (the manager decides, the default)',
});
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

/** A front matter list of decider groups, with the example an author needs when it is not a list. */
const deciders = (what: string) =>
  z
    .array(z.unknown(), { error: `must be a list of the groups who ${what}, e.g. ["ops"]` })
    .pipe(DeciderGroupsSchema)
    .optional();

export const WorkerFrontMatterSchema = strict(
  {
    id: id(),
    title: text('a short human-readable title'),
    description: text('one line the manager sees in its worker list'),
    inputTags: z
      .array(TagSchema, { error: `must be an array of tags the worker reads, e.g. ["request", "brief"] (may be empty)` })
      .refine(noDuplicates, { error: 'must not list the same tag twice' }),
    outputTags: z
      .array(TagSchema, { error: 'must be a non-empty array of tags like "outline"' })
      .min(1, { error: 'must be a non-empty array of tags like "outline"' })
      .refine(noDuplicates, { error: 'must not list the same tag twice' }),
    roles: z
      .array(RoleSchema, { error: 'must be an array of roles like [{ id: "literary", description: "…" }]' })
      .refine((roles) => noDuplicates(roles.map((r) => r.id)), { error: 'must not define the same role id twice' })
      .optional(),
    approval: ApprovalPolicySchema.optional(),
    tools: z
      .array(z.string().regex(TOOL_REF_PATTERN, { error: `must be ${TOOL_REF_HINT}` }), {
        error: `must be an array of MCP tools the worker may call, each ${TOOL_REF_HINT}`,
      })
      .max(MAX_TOOL_REFS, { error: `must list at most ${MAX_TOOL_REFS} tools: use "server.*" for all of a server's tools` })
      .refine(noDuplicates, { error: 'must not list the same tool twice' })
      .optional(),
    /** The groups that decide its steps and tool calls, and its artifacts (deadlines.ts: anyone else's decision is refused). */
    approvers: deciders('approve its steps and tool calls'),
    reviewers: deciders('review its artifacts'),
    deadlines: workerDeadlinesField().optional(),
  },
  'YAML front matter with id, title, description, inputTags and outputTags',
);

export type PackageManifest = z.infer<typeof PackageManifestSchema>;

export interface WorkerRole {
  id: string;
  description: string;
}

/** One worker of a package, as the runtime uses it. */
export interface WorkerSkill {
  id: string;
  title: string;
  /** The one line the manager sees in its worker list. */
  description: string;
  /** Tags whose bodies are put into the worker's context. */
  inputTags: string[];
  /** The only tags the worker may `submit`. */
  outputTags: string[];
  /** Voices the manager may pick with `run_worker {roleId}`; empty when none. */
  roles: WorkerRole[];
  /** Who decides whether a run waits for a person (front matter `approval`, default `model`). */
  approval: ApprovalPolicy;
  /** The MCP tools the worker may call (front matter `tools`: `server.tool` or `server.*`); empty when none. */
  tools: string[];
  /** The groups that decide its steps and tool calls (front matter `approvers`); absent: whoever may decide the session. */
  approvers?: string[];
  /** The groups that decide its artifacts (front matter `reviewers`); absent: whoever may decide the session. */
  reviewers?: string[];
  /** Deadlines of the decisions about it (front matter `deadlines`), over the package's. */
  deadlines?: DeadlinePolicy;
  /** The worker's system prompt (the Markdown body of its file). */
  prompt: string;
}

export interface SkillPackage {
  id: string;
  title: string;
  description: string;
  /** In chain order, as listed in the manifest. */
  workers: WorkerSkill[];
  /** The manifest's MCP servers, by name (`${VAR}` placeholders as written: read when a server starts). */
  mcpServers: Record<string, McpServerConfig>;
  /** The manifest's deadlines by waiting reason (absent: none). */
  deadlines?: DeadlinePolicy;
  /** Absolute path of the package folder. */
  dir: string;
}
