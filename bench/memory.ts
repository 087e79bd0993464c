/**
 * Figure 3: retained bytes per waiting session: n sessions each run to their first wait and
 * kept; (heapUsed + external) after gc(), minus the same before, divided by n.
 */

const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('gc() is not exposed: run node with --expose-gc (npm run bench does).');
  collect();
};

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Full collections with turns of the event loop between them, until the heap is quiet. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gc();
    await tick();
  }
}

export function heapPlusExternal(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Keeps what `startOne` returns for each of n sessions; bytes per session retained. */
export async function retainedPerSession(n: number, startOne: (i: number) => Promise<unknown>): Promise<number> {
  const kept: unknown[] = new Array(n);
  await settle();
  const before = heapPlusExternal();
  for (let i = 0; i < n; i++) kept[i] = await startOne(i);
  await settle();
  const after = heapPlusExternal();
  // Use `kept` after the measure, so nothing can collect the sessions before it.
  if (kept.some((k) => k === undefined)) throw new Error('a session was not kept');
  kept.length = 0;
  return (after - before) / n;
}

/** Bytes freed per session when `drop()` lets go of n sessions (measured after gc). */
export async function freedPerSession(n: number, drop: () => void): Promise<number> {
  await settle();
  const before = heapPlusExternal();
  drop();
  await settle();
  return (before - heapPlusExternal()) / n;
}
