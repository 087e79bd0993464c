/**
 * The shortest paths of a walk as the tree they form: xstate/graph builds each path as its
 * predecessor's path plus one step (the very same state and event objects), so the paths share
 * their prefixes. Replaying the tree takes each edge once, where replaying every path from the
 * start took the edges near the start once per path through them.
 */
import type { EventObject } from 'xstate';

export interface PathStep<S> {
  state: S;
  event: EventObject;
}

export interface PathNode<S> {
  /** The step that leads here from the parent (the root's: the initial state). */
  step: PathStep<S>;
  /** The paths (their indexes in the list given) that end here. */
  ends: number[];
  children: PathNode<S>[];
}

/**
 * The tree of `paths` (each one's first step is the initial state, and every path starts from the
 * same one). A step is told apart by its state and event objects, which the paths that share
 * it share.
 */
export function pathTree<S>(paths: readonly { steps: readonly PathStep<S>[] }[]): PathNode<S> | undefined {
  const first = paths[0]?.steps[0];
  if (!first) return undefined;
  const root: PathNode<S> = { step: first, ends: [], children: [] };
  const index = new Map<PathNode<S>, Map<S, Map<EventObject, PathNode<S>>>>();
  const childOf = (node: PathNode<S>, step: PathStep<S>): PathNode<S> => {
    const byState = index.get(node) ?? index.set(node, new Map()).get(node)!;
    const byEvent = byState.get(step.state) ?? byState.set(step.state, new Map()).get(step.state)!;
    let child = byEvent.get(step.event);
    if (!child) {
      child = { step, ends: [], children: [] };
      byEvent.set(step.event, child);
      node.children.push(child);
    }
    return child;
  };
  paths.forEach((path, i) => {
    path.steps.slice(1).reduce(childOf, root).ends.push(i);
  });
  return root;
}
