/**
 * A pending AG-UI interrupt survives a reload and a server restart (PostgreSQL): a new
 * HttpAgent on the same thread learns the open interrupt from a run with nothing new, and
 * resumes it on a server started after the first one stopped; the thread then runs to done.
 */
import { describe, expect, it } from 'vitest';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { usePostgresServers } from '../support/postgres-serve.js';
import { agUiAgent, runError, types } from './ag-ui-client.js';

const pg = usePostgres();
const server = usePostgresServers();

describe.skipIf(postgresUnavailable !== null)('AG-UI on PostgreSQL', () => {
  it('a reloaded page and a restarted server resume the pending interrupt', async () => {
    const url = await pg.createDatabase();
    const first = await server(url);
    const tab = agUiAgent(`${first.handle.url}/ag-ui/short-story`, 'thread-pg');
    tab.agent.addMessage({ id: 'u1', role: 'user', content: 'A story about a lighthouse keeper.' });
    expect(runError(await tab.run())).toBeUndefined();
    const pending = tab.interrupt!;
    expect(pending).toMatchObject({ reason: 'tool_call' });

    // Reload: a new agent on the thread knows nothing; a run with nothing new tells it the open interrupt.
    const reloaded = agUiAgent(`${first.handle.url}/ag-ui/short-story`, 'thread-pg');
    const report = await reloaded.run();
    expect(types(report)).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT', 'STATE_SNAPSHOT', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(reloaded.interrupt).toEqual(pending);
    expect(reloaded.agent.messages.map((m) => m.id)).toEqual(tab.agent.messages.map((m) => m.id));

    // Restart: the server stops, another starts on the same database; a new page resumes the same interrupt.
    await first.stop();
    const second = await server(url);
    const after = agUiAgent(`${second.handle.url}/ag-ui/short-story`, 'thread-pg');
    await after.run();
    expect(after.interrupt).toEqual(pending);
    const approved = await after.resume(pending, { approved: true });
    expect(approved.error).toBeUndefined();
    expect(after.interrupt).toMatchObject({ reason: 'steward:artifact_review' });

    for (let i = 0; i < 20 && after.interrupt; i++) {
      const next = after.interrupt;
      const answer = await after.resume(next, next.reason === 'tool_call' ? { approved: true } : { accepted: true });
      expect(answer.error, String(answer.error)).toBeUndefined();
      expect(runError(answer)).toBeUndefined();
    }
    expect(after.interrupt).toBeUndefined();
    expect(after.state).toMatchObject({ phase: 'done' });
  });
});
