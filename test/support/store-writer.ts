/**
 * A separate OS process that appends to one session of a SQLite store, for
 * test/store/two-writers.test.ts. Usage:
 *   node --import tsx test/support/store-writer.ts <db> <session> <count> <writer>
 * Prints "ready", waits for a line on stdin (so both writers start together), then does
 * load → append(expected revision) <count> times, retrying on ConflictError as a real
 * client would. Ends by printing one JSON line: { writer, appended, conflicts }.
 */
import { once } from 'node:events';
import { ConflictError } from '../../src/core/errors.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

const [dbPath, sessionId, countText, writer] = process.argv.slice(2);
if (!dbPath || !sessionId || !countText || !writer) {
  console.error('usage: store-writer.ts <db> <session> <count> <writer>');
  process.exit(2);
}
const count = Number(countText);

const store = new SqliteStore(dbPath);
process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.pause();

let conflicts = 0;
for (let i = 0; i < count; i++) {
  for (;;) {
    const session = await store.load(sessionId);
    if (!session) throw new Error(`session "${sessionId}" vanished`);
    const payload = { writer, i };
    try {
      await store.append({
        id: sessionId,
        expectedRevision: session.revision,
        entries: [{ kind: 'event', type: 'tick', payload, state: `${writer}.${i}` }],
        snapshot: payload,
      });
      break;
    } catch (error) {
      if (!ConflictError.isInstance(error)) throw error;
      conflicts++;
    }
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ writer, appended: count, conflicts })}\n`);
