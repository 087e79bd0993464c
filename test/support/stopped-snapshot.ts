/**
 * What an earlier Steward could save for a session stopped while its writes were queued: the
 * stopped actor's snapshot (status "stopped", no children, so no model call in flight).
 */
export function asSavedStopped(persisted: unknown): unknown {
  const copy = structuredClone(persisted) as { snapshot: { status: string; children: object } };
  copy.snapshot.status = 'stopped';
  copy.snapshot.children = {};
  return copy;
}
