/**
 * Names no person may act under: the journal says `steward` for model results and `system`
 * for the runtime, and a worker's id names what that worker wrote. An event `by: "echo"`
 * would record a user's text as written by the worker echo, so the session refuses it,
 * whichever entry point (library, CLI, HTTP) the event came through.
 */
import type { SessionContext } from '../core/machines/session.context.js';
import type { UserEvent } from '../core/machines/session.events.js';
import { foldName } from '../core/text/names.js';

export const RESERVED_ACTOR_NAMES: readonly string[] = ['steward', 'system'];

/** How many worker ids a refusal lists before "…" (a package may have hundreds). */
const LISTED_WORKERS = 10;

/** The worker ids of the session's package; before one is chosen, of every package it may choose. */
function workerIds(context: SessionContext): string[] {
  const packages = context.package ? [context.package] : context.catalog;
  return packages.flatMap((p) => p.workers.map((w) => w.id));
}

/** Why the event's `by` (or `via`) is a reserved name, with the fix; undefined when it is not. */
export function reservedActorProblem(event: UserEvent, context: SessionContext): string | undefined {
  for (const field of ['by', 'via'] as const) {
    const name = event[field];
    if (name === undefined) continue;
    // As a reader sees it: "Steward" or "Ｓteward" in a log reads as the runtime just as well.
    const folded = foldName(name);
    const workers = workerIds(context);
    if (!RESERVED_ACTOR_NAMES.includes(folded) && !workers.some((w) => foldName(w) === folded)) continue;
    const listed = workers.length > LISTED_WORKERS ? `${workers.slice(0, LISTED_WORKERS).join(', ')}, …` : workers.join(', ');
    return (
      `${field}: ${JSON.stringify(name)} is a reserved name: ${RESERVED_ACTOR_NAMES.join(', ')}${listed ? ` and the worker ids of this session's package (${listed})` : ''} ` +
      `name the runtime and its agents in the journal, so no person may act under them. Give the name of who acted (CLI: --as NAME; steward serve: a token with another name), or leave ${field} out.`
    );
  }
  return undefined;
}
