/**
 * The manager's prompt, assembled fresh for every round (DESIGN §5): role and rules, the
 * package and its workers, the blackboard *index* (never bodies: those enter through
 * read_blackboard), artifact statuses, then the conversation: the bounded window the context
 * keeps, so the prompt stays bounded however long the work runs.
 */
import { blackboardIndex } from '../blackboard/blackboard.js';
import type { SessionContext } from '../machines/session.context.js';
import { omittedNote } from '../machines/transcript.js';
import type { ChatMessage } from '../models/model.js';
import { listArtifacts, listWorkers } from '../tools/loop-tools.js';

const MANAGER_ROLE = `You are the steward: the manager of a small team of worker agents that produce a piece of work for the user.
You plan the work and schedule workers; you never write the work yourself and never edit the blackboard.

How you work:
- Loop tools keep your turn going: read_blackboard (bodies of tags; the index below only shows first lines), list_workers, list_artifacts.
- Boundary tools end your turn: run_worker (set requiresApproval true for costly or uncertain steps), ask_user (a message, an assessment of the work, optional questions), \
review_blackboard (show the user an overview), finish (when the work is complete and accepted).
- A worker's input and output tags come from its skill: never pass inputTags or outputTags.
- Only the user accepts or rejects artifacts. After a worker runs, the user reviews its artifact; you hear the outcome.
- At most one boundary tool per reply. You have a limited number of rounds between two user actions: do not read the same tag twice.
- If a tool result starts with "Error:", fix the call as it says.`;

/**
 * The prompt's parts change only when their data does; the context's objects are immutable,
 * so each part is remembered for the last object it was built from, and a round reuses what
 * did not change. (One slot, not a WeakMap: a WeakMap entry per write cost more in set-up and
 * GC than rebuilding the part, measured.)
 */
function cachedBy<K extends object>(build: (key: K) => string): (key: K) => string {
  let lastKey: K | undefined;
  let lastText = '';
  return (key) => {
    if (key !== lastKey) {
      lastText = build(key);
      lastKey = key;
    }
    return lastText;
  };
}

const packageText = cachedBy(
  (pkg: NonNullable<SessionContext['package']>) =>
    `## Package: ${pkg.title} (${pkg.id})\n${pkg.description}\n\n## Workers\n${listWorkers({ blackboard: {}, workers: pkg.workers, artifacts: [] })}`,
);

const boardText = cachedBy((blackboard: SessionContext['blackboard']) => {
  const lines = blackboardIndex(blackboard)
    .map((e) => `- ${e.tag} v${e.version} (${e.size} chars, by ${e.writtenBy}): ${e.firstLine}`)
    .join('\n');
  return `## Blackboard index\n${lines || '(empty)'}`;
});

const artifactsText = cachedBy((artifacts: SessionContext['artifacts']) => `## Artifacts\n${listArtifacts({ blackboard: {}, workers: [], artifacts })}`);

export function managerSystemPrompt(context: SessionContext): string {
  const pkg = context.package ? packageText(context.package) : '## Package: (none)\n\n## Workers\n(no package)';
  const status =
    `## Status\nRound ${context.burst + 1} of at most ${context.maxBurst} before you must hand back to ` +
    `the user. Intake ` +
    `${context.intakeConfirmed ? 'confirmed' : 'not confirmed yet: clarify with ask_user if the request is unclear'}.`;
  return `${MANAGER_ROLE}\n\n${pkg}\n\n${boardText(context.blackboard)}\n\n${artifactsText(context.artifacts)}\n\n${status}`;
}

/** The note before a window that lost messages. */
const OMITTED_HINT = 'the blackboard and artifact lists above are current, and read_blackboard with a version reads an older one.';

/**
 * The system prompt, then the manager's transcript window (src/core/machines/transcript.ts): the
 * context keeps only a bounded window, cut between groups (an assistant message with all its
 * tool results; a user message), so the prompt is bounded within one long turn too and stays
 * valid for the API.
 */
export function managerMessages(context: SessionContext): ChatMessage[] {
  const t = context.transcripts.manager;
  return [{ role: 'system', content: managerSystemPrompt(context) }, ...omittedNote(t, OMITTED_HINT), ...t.messages];
}
