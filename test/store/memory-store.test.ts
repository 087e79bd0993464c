import { MemoryStore } from '../../src/store/memory-store.js';
import { describeSessionStore } from './session-store.spec.js';

describeSessionStore('MemoryStore', async () => {
  const store = new MemoryStore();
  return { store, cleanup: () => store.close() };
});
