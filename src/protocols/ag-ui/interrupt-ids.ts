/**
 * The ids of Steward's AG-UI interrupts, and what an id names. An interrupt id is the session's
 * and the wait's (`<session>#w<wait>`, `view.wait`), so that an answer made for it is applied
 * to that wait or not at all. A wait that asks about several things at once has one interrupt
 * per thing, its id the wait's with a suffix naming it: a worker's MCP call
 * (`~<callId>`), a step of a fan-out (`/item/<item>`, the manager's run_worker call), an
 * artifact of a fan-in (`/artifact/<artifactId>`). An answer sent again for one of them is
 * then stale (or a repeat) for that thing, never taken for the next one the wait asks about.
 */

/** What an interrupt id names besides its wait: a tool call, a fan-out's step item, a fan-in's artifact, or nothing more. */
export type InterruptTarget = { callId: string } | { item: string } | { artifactId: string } | null;

/** The fields an answer names a fan-out's item with: a step's run_worker call, or the artifact under review. */
export const ITEM_FIELDS = ['item', 'artifactId'] as const;

/** The suffix of each kind of target, and the payload field that names it. */
const TARGETS = [
  { marker: '~', field: 'callId' },
  { marker: '/item/', field: ITEM_FIELDS[0] },
  { marker: '/artifact/', field: ITEM_FIELDS[1] },
] as const;

/**
 * The interrupt id of the session's wait number `wait` (`view.wait`).
 *
 * @example
 * interruptId('s1', 3); // 's1#w3'
 */
export function interruptId(sessionId: string, wait: number): string {
  return `${sessionId}#w${wait}`;
}

/**
 * The interrupt id of a tool wait's question about one call (approve_tool, tool_input, tool_interrupted).
 *
 * @example
 * toolCallInterruptId('s1', 3, 'c1'); // 's1#w3~c1'
 */
export function toolCallInterruptId(sessionId: string, wait: number, callId: string): string {
  return `${interruptId(sessionId, wait)}~${callId}`;
}

/**
 * The interrupt id of one step of a fan-out (approve_step with several items): `item` is its run_worker call.
 *
 * @example
 * stepItemInterruptId('s1', 3, 'run_north'); // 's1#w3/item/run_north'
 */
export function stepItemInterruptId(sessionId: string, wait: number, item: string): string {
  return `${interruptId(sessionId, wait)}/item/${item}`;
}

/**
 * The interrupt id of one artifact of a fan-in (review_artifact with several under review).
 *
 * @example
 * artifactItemInterruptId('s1', 5, 'a2'); // 's1#w5/artifact/a2'
 */
export function artifactItemInterruptId(sessionId: string, wait: number, artifactId: string): string {
  return `${interruptId(sessionId, wait)}/artifact/${artifactId}`;
}

/**
 * The wait and the target an interrupt id names, or null when it is none of this session's.
 *
 * @example
 * parseInterruptId('s1', 's1#w3/item/run_north'); // { wait: 3, target: { item: 'run_north' } }
 */
export function parseInterruptId(sessionId: string, id: string): { wait: number; target: InterruptTarget } | null {
  const prefix = `${sessionId}#w`;
  if (!id.startsWith(prefix)) return null;
  const rest = id.slice(prefix.length);
  const digits = /^\d+/.exec(rest)?.[0] ?? '';
  const wait = Number(digits);
  if (!Number.isSafeInteger(wait) || wait < 1) return null;
  const suffix = rest.slice(digits.length);
  if (suffix === '') return { wait, target: null };
  const kind = TARGETS.find((t) => suffix.startsWith(t.marker));
  if (!kind) return null;
  const named = suffix.slice(kind.marker.length);
  // A suffix with nothing after it names the wait alone, as it always did for a tool call's `~`.
  return { wait, target: named === '' ? null : ({ [kind.field]: named } as InterruptTarget) };
}

/**
 * The wait number an interrupt id names, or null when it is none of this session's.
 *
 * @example
 * interruptWait('s1', 's1#w3~c1'); // 3
 */
export function interruptWait(sessionId: string, id: string): number | null {
  return parseInterruptId(sessionId, id)?.wait ?? null;
}

/**
 * An answer that names no target is for the one its interrupt id names (`~<callId>`,
 * `/item/<item>`, `/artifact/<artifactId>`): sent again once that one was decided, it is
 * compared with that one's decision (a repeat is harmless) or refused, never taken for the
 * next one the wait asks about. An answer that names its own is left as it is.
 *
 * @example
 * withInterruptTarget('s1', 's1#w3~c1', { result: 'Done.' }); // { result: 'Done.', callId: 'c1' }
 * withInterruptTarget('s1', 's1#w4/item/run_north', { approved: true }); // { approved: true, item: 'run_north' }
 */
export function withInterruptTarget(sessionId: string, id: string | undefined, payload: unknown): unknown {
  const target = id === undefined ? null : (parseInterruptId(sessionId, id)?.target ?? null);
  if (target === null || payload === null || typeof payload !== 'object' || Array.isArray(payload)) return payload;
  const [field] = Object.keys(target);
  if (Object.hasOwn(payload, field!)) return payload;
  return { ...payload, ...target };
}

/**
 * Why an answer cannot be for the interrupt `id`: it names another item or artifact than the
 * one the id names (null: it names the same, or none). A tool call's answer is left to its
 * wait's rules: it may name any call that waits (the interrupt names the first of them).
 *
 * @example
 * otherItemNamed('s1', 's1#w4/item/run_north', { approved: true, item: 'run_east' }); // 'Interrupt s1#w4/item/run_north is for item "run_north", …'
 */
export function otherItemNamed(sessionId: string, id: string | undefined, payload: unknown): string | null {
  const target = id === undefined ? null : (parseInterruptId(sessionId, id)?.target ?? null);
  if (target === null || 'callId' in target || payload === null || typeof payload !== 'object') return null;
  const [field, own] = Object.entries(target)[0]!;
  const named = (payload as Record<string, unknown>)[field];
  if (named === undefined || named === own) return null;
  return `Interrupt ${id} is for ${field === 'item' ? 'item' : 'artifact'} "${own}", but the answer names ${JSON.stringify(named).slice(0, 80)}: answer that item's own interrupt, or leave "${field}" out.`;
}
