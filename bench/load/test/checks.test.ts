/**
 * The checks the load benchmark's run relies on, tested on cases where they must find a
 * problem: a lost action, a call made twice, the model's time in an action, the model
 * server's record, a profile's parts. The run itself is quick.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { callsRunTwice } from '../kills.js';
import { profileOf, profileParts } from '../cpu-profile.js';
import { lostActions } from '../journal-check.js';
import { addedLatencies } from '../one-server.js';
import { problemsOf } from '../report.js';
import { callerURL, LlmRecord, type LlmServer } from '../llm-server.js';
import { startLlmProcess } from '../llm-process.js';
import { createRuntime } from '../../../src/runtime/runtime.js';
import { SqliteStore } from '../../../src/store/sqlite-store.js';
import { DemoModel } from '../../../src/models/demo-model.js';

const dir = mkdtempSync(join(tmpdir(), 'steward-load-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the load benchmark’s checks', () => {
  it('counts an acknowledged action the journal lacks as lost', async () => {
    const db = join(dir, 'lost.db');
    const store = new SqliteStore(db);
    const runtime = createRuntime({ model: new DemoModel(), store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'A note, please.' });
    const id = session.id;
    await session.close();
    await store.close();
    expect(await lostActions(db, [{ acknowledged: new Map([[id, 1]]) }])).toBe(0);
    expect(await lostActions(db, [{ acknowledged: new Map([[id, 3]]) }])).toBe(2);
  });

  it('tells a call made twice from a retry after a 429', () => {
    const arrivals = new Map([
      [
        1,
        [
          { at: 1, messages: 'a', throttled: true, caller: '' },
          { at: 2, messages: 'a', throttled: false, caller: '' },
          { at: 3, messages: 'b', throttled: false, caller: '' },
        ],
      ],
      [
        2,
        [
          { at: 1, messages: 'a', throttled: false, caller: '' },
          { at: 5, messages: 'a', throttled: false, caller: '' },
        ],
      ],
    ]);
    expect(callsRunTwice(arrivals)).toBe(1);
  });

  it("subtracts only the session's own model calls inside the action", () => {
    const llm = {
      calls: [
        { session: 1, start: 10, end: 60, throttledMs: 0 },
        { session: 2, start: 10, end: 90, throttledMs: 0 },
        { session: 1, start: 200, end: 300, throttledMs: 0 },
      ],
    } as unknown as LlmServer;
    const { added, model } = addedLatencies([{ session: 1, sessionId: 's', kind: 'x', start: 0, end: 100, status: 200 }], llm);
    expect(model).toEqual([50]);
    expect(added).toEqual([50]);
  });

  it('reads the model server in its own process on the driver’s clock: a 429, then its retry served', async () => {
    const llm = await startLlmProcess({ minMs: 5, maxMs: 10, tokensPerSecond: 10_000, rate429: 1, retryAfterMs: 1, seed: 1 });
    try {
      const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '[load-7] A note, please.' }] });
      const post = () =>
        fetch(`${callerURL(llm.baseURL, 'server-2')}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const before = performance.now();
      expect((await post()).status).toBe(429);
      const served = await post();
      expect(served.status).toBe(200);
      await served.text();
      const after = performance.now();
      // The IPC messages trail the replies by a moment.
      await vi.waitFor(() => expect(llm.calls).toHaveLength(1));
      const [call] = llm.calls;
      expect(call!.session).toBe(7);
      expect(call!.start).toBeGreaterThanOrEqual(before - 1);
      expect(call!.end).toBeLessThanOrEqual(after + 1);
      expect(llm.throttled).toBe(1);
      expect(llm.arrivals.get(7)!.map((a) => [a.throttled, a.caller])).toEqual([
        [true, 'server-2'],
        [false, 'server-2'],
      ]);
      expect(callsRunTwice(llm.arrivals)).toBe(0);
      await vi.waitFor(() => expect(llm.openSessions()).toEqual([]));
    } finally {
      await llm.close();
    }
  });

  it("tells a kill's victims by the server each open request came from; a second request of a session open at once is an overlap", () => {
    const record = new LlmRecord();
    const arrival = (caller: string) => ({ at: 1, messages: 'a', throttled: false, caller });
    record.arrived(1, arrival('server-1'));
    record.arrived(2, arrival('server-2'));
    expect(record.openSessions('server-1')).toEqual([1]);
    expect(record.openSessions().sort()).toEqual([1, 2]);
    // Session 2 taken over by server 1 while server 2's request is still open.
    record.arrived(2, arrival('server-1'));
    expect(record.overlaps).toBe(1);
    record.left(2, 'server-2');
    expect(record.openSessions('server-2')).toEqual([]);
    expect(record.openSessions('server-1').sort()).toEqual([1, 2]);
  });

  it("puts a profile's time in the part of the nearest caller that has one: a socket write under pg is PostgreSQL's, under nobody is other", () => {
    const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });
    const profile = {
      nodes: [
        frame(1, '(root)', '', [2, 3, 4, 7]),
        frame(2, '(idle)', ''),
        frame(3, '(garbage collector)', ''),
        frame(4, 'query', 'file:///app/node_modules/pg/lib/client.js', [5]),
        frame(5, 'uncork', 'node:internal/streams/writable', [6]),
        frame(6, 'writev', ''),
        frame(7, 'onread', 'node:net'),
      ],
      samples: [2, 2, 3, 6, 6, 6, 7],
      timeDeltas: [1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6],
    };
    const { seconds, parts } = profileParts(profile);
    expect(seconds).toBe(7);
    expect(Object.fromEntries(parts.map((p) => [p.part, p.seconds]))).toEqual({
      'PostgreSQL (pg, the store)': 3,
      'idle (waiting for I/O)': 2,
      'garbage collection': 1,
      'other (Node internals: sockets, streams, timers, microtasks)': 1,
    });
  });

  it("reads the newest profile of the server's pid, not an older process's of the same pid or another's", () => {
    const profiles = join(dir, 'profiles');
    mkdirSync(profiles);
    const write = (name: string, samples: number) =>
      writeFileSync(
        join(profiles, name),
        JSON.stringify({
          nodes: [{ id: 1, callFrame: { functionName: '(idle)', url: '' } }],
          samples: Array(samples).fill(1),
          timeDeltas: Array(samples).fill(1),
        }),
      );
    write('CPU.20261205.081306.7408.0.001.cpuprofile', 1);
    write('CPU.20261205.091306.7408.0.001.cpuprofile', 2);
    write('CPU.20261205.101306.17408.0.001.cpuprofile', 3);
    expect(profileOf(profiles, 7408)?.samples).toHaveLength(2);
    expect(profileOf(profiles, 408)).toBeNull();
  });

  it('fails a run that lost work or ran a session on two servers', () => {
    const run = { store: 'sqlite', sessions: 1, actions: 4, lost: 1, overlaps: 0, failures: [] } as never;
    expect(problemsOf([run], null)).toEqual(['sqlite 1: 1 acknowledged action(s) missing from the journal']);
    const kills = { lost: 0, overlaps: 2, notResumed: 1, failures: [] } as never;
    expect(problemsOf([], kills)).toHaveLength(2);
  });
});
