/**
 * Nothing lost: after the servers stopped, every user event a server acknowledged (200)
 * must be in the session's journal. Read straight from the store, not through a server.
 */
import { openStore } from '../../src/store/open-store.js';

export async function lostActions(db: string, crowds: ReadonlyArray<{ acknowledged: ReadonlyMap<string, number> }>): Promise<number> {
  const store = await openStore(db);
  let lost = 0;
  try {
    for (const crowd of crowds) {
      for (const [id, count] of crowd.acknowledged) {
        const entries = await store.journal(id, { afterSeq: 0, limit: 10_000 });
        const events = entries.filter((e) => e.kind === 'event').length;
        if (events < count) lost += count - events;
      }
    }
  } finally {
    await store.close?.();
  }
  return lost;
}
