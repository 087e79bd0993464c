/**
 * A model turn's input is the session's whole context (the chart's `input: ({ context }) =>
 * context`), and XState persists an invoked promise actor with its input, so that a resumed
 * session can make the call again. Saved as it is, the context would be written twice in
 * every snapshot of a running session, and that snapshot is what each write inside a model
 * loop saves. So a child whose input is the snapshot's own context object (nothing was
 * assigned since the call started) is saved without it, marked `inputIsContext`; opening the
 * snapshot puts the context back as its input. A child whose input is anything else (a tool
 * call's, a branch's, a context that has changed since) keeps its input as it is.
 */

import { isPlainRecord } from '../core/blackboard/keyed.js';

/** The mark on a persisted child whose input was left out because it was the snapshot's context. */
const INPUT_IS_CONTEXT = 'inputIsContext';

type PersistedChild = { snapshot?: { input?: unknown } } & Record<string, unknown>;

/** XState's persisted snapshot with each child whose input is the context saved without it. */
export function withoutContextInputs(snapshot: unknown): unknown {
  if (!isPlainRecord(snapshot) || !isPlainRecord(snapshot.children) || !isPlainRecord(snapshot.context)) return snapshot;
  const { context } = snapshot;
  let changed = false;
  // Object.fromEntries defines own keys: an actor id can never reach a prototype's setter.
  const children = Object.fromEntries(
    Object.entries(snapshot.children as Record<string, PersistedChild>).map(([id, child]) => {
      const childSnapshot = isPlainRecord(child) ? child.snapshot : undefined;
      if (!isPlainRecord(childSnapshot) || childSnapshot.input !== context) return [id, child];
      changed = true;
      const { input: _context, ...rest } = childSnapshot;
      return [id, { ...child, snapshot: rest, [INPUT_IS_CONTEXT]: true }];
    }),
  );
  return changed ? { ...snapshot, children } : snapshot;
}

/** A snapshot as opened from the store: each marked child gets the snapshot's context back as its input. */
export function withContextInputs<T extends { context: unknown }>(snapshot: T): T {
  const children = (snapshot as { children?: unknown }).children;
  if (!isPlainRecord(children)) return snapshot;
  let changed = false;
  const restored = Object.fromEntries(
    Object.entries(children).map(([id, child]) => {
      if (!isPlainRecord(child) || child[INPUT_IS_CONTEXT] !== true || !isPlainRecord(child.snapshot)) return [id, child];
      changed = true;
      const { [INPUT_IS_CONTEXT]: _mark, ...rest } = child;
      return [id, { ...rest, snapshot: { ...child.snapshot, input: snapshot.context } }];
    }),
  );
  return changed ? { ...snapshot, children: restored } : snapshot;
}
