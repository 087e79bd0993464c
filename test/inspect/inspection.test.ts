import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { STATELY_INSPECTOR_OPTIONS } from '../../src/inspect/stately.js';
import { testScript } from '../support/script-build.js';
import { closedPort } from '../support/temp.js';

/** Inspection events as small objects: who, what, which event, which state. */
function reduce(events: StatelyInspectionEvent[]) {
  return events.map((e) => ({
    type: e.type.replace('@xstate.', ''),
    actor: e.sessionId,
    ...(e.type === '@xstate.actor' ? { name: e.name, parent: e.parentId ?? null } : {}),
    ...('event' in e ? { event: (e.event as { type: string }).type } : {}),
    ...(e.type === '@xstate.snapshot' && (e.snapshot as { value?: unknown }).value !== undefined
      ? { value: JSON.stringify((e.snapshot as { value?: unknown }).value) }
      : {}),
  }));
}

const twoManagerRounds = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['request'] })] },
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'echo', requiresApproval: true })] },
  ]);

describe('inspection events, offline', () => {
  it('the session actor, its events and snapshots arrive in order through a custom adapter', async () => {
    const received: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => received.push(event) });
    const runtime = createRuntime({ model: twoManagerRounds(), inspect: (event) => inspector.inspect.next?.(event) });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'hello' });
    expect(result.ok).toBe(true);
    await new Promise((r) => setTimeout(r, 20)); // createInspector converts events on the next tick

    const events = reduce(received);
    const root = events[0]!;
    expect(root).toEqual({ type: 'actor', actor: root.actor, name: 'session', parent: null });
    const ofSession = events.filter((e) => e.actor === root.actor);
    expect(ofSession.map((e) => [e.type, e.event ?? null, e.value ?? null])).toEqual([
      ['actor', null, null],
      ['event', 'xstate.init', null],
      ['snapshot', 'xstate.init', '{"waiting_user":"intake"}'],
      ['event', 'user_submitted_input', null],
      ['snapshot', 'user_submitted_input', '{"running":{"manager":"thinking"}}'],
      ['event', 'xstate.done.actor.managerTurn', null],
      ['snapshot', 'xstate.done.actor.managerTurn', '{"running":{"manager":"thinking"}}'],
      ['event', 'xstate.done.actor.managerTurn', null],
      ['snapshot', 'xstate.done.actor.managerTurn', '{"waiting_user":"approve_step"}'],
    ]);
    // Each manager round is a child actor of the session, registered before its result arrives.
    const turns = events.filter((e) => e.type === 'actor' && e.name === 'managerTurn');
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.parent).toBe(root.actor);
      const registered = events.indexOf(turn);
      const resolved = events.findIndex((e) => e.actor === turn.actor && e.event === 'xstate.promise.resolve');
      expect(registered).toBeLessThan(resolved);
    }
  });
});

/** Runs the fixture; resolves with its exit code, output and wall time (killed after `limitMs`). */
async function runChild(target: string, limitMs = 10_000, env: Record<string, string> = {}) {
  const started = Date.now();
  const child = spawn(process.execPath, [testScript('test/inspect/fixtures/remote-run.ts'), target], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(killer);
  return { code, signal, stdout, stderr, ms: Date.now() - started };
}

describe('the machine definition as the Stately inspector receives it', () => {
  /** The session's definition from an @xstate.actor event, as the inspector would parse it. */
  async function definitionWith(options: Parameters<typeof createInspector>[1]) {
    const received: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => received.push(event) }, options);
    const runtime = createRuntime({ model: twoManagerRounds(), inspect: (event) => inspector.inspect.next?.(event) });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await new Promise((r) => setTimeout(r, 20));
    session.stop();
    const actor = received.find((e) => e.type === '@xstate.actor' && e.name === 'session');
    return JSON.parse((actor as { definition: string }).definition) as {
      states: Record<string, { states: Record<string, { states: Record<string, { always: { guard: unknown; actions: unknown }[] }> }> }>;
    };
  }

  it("keeps guard and action params visible (the default depth limit turns them into '[Object]')", async () => {
    const checking = (await definitionWith(STATELY_INSPECTOR_OPTIONS)).states.running!.states.manager!.states.checking!;
    expect(checking.always[0]).toEqual({
      guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'actorMayUseTool' } },
      actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'actorMayUseTool' } },
    });
    const refusals = checking.always.filter((t) => (t.guard as { type?: string } | undefined)?.type === 'breaksRule');
    expect(new Set(refusals.map((t) => JSON.stringify(t.guard))).size).toBe(refusals.length);
    // Why the option is needed: with @statelyai/inspect's default (10) the params are cut off.
    const cut = (await definitionWith(undefined)).states.running!.states.manager!.states.checking!;
    expect(JSON.stringify(cut.always[0])).toContain('[Object]');
  });
});

describe('remote inspection (createRemoteInspect)', () => {
  it('--inspect ws://127.0.0.1:<closed port>: the session completes and the process exits on its own', async () => {
    const port = await closedPort();
    // The stock WebSocket inspector retries every 5 s forever: such a process is killed at 15 s.
    const run = await runChild(`ws://127.0.0.1:${port}`, 15_000);
    expect(run.signal, `killed after ${run.ms} ms: the process was kept alive\n${run.stderr}`).toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ state: 'done', ok: true });
    const said = run.stderr.split('\n').filter((l) => l.startsWith('[inspect]'));
    expect(said).toEqual([`[inspect] Inspector at ws://127.0.0.1:${port} is unreachable (ECONNREFUSED); the session runs without inspection.`]);
  }, 30_000);

  it('a reachable ws:// inspector receives the session, and still does not keep the process alive', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    const messages: { type: string; name?: string; event?: { type: string } }[] = [];
    wss.on('connection', (socket) => socket.on('message', (data) => messages.push(JSON.parse(String(data)))));
    try {
      const run = await runChild(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`);
      expect(run.signal, 'the open inspector socket kept the process alive').toBeNull();
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain('unreachable');
      await new Promise((r) => setTimeout(r, 50));
      expect(messages[0]).toMatchObject({ type: '@xstate.actor', name: 'session' });
      const userEvents = messages.filter((m) => m.type === '@xstate.event' && m.event?.type.startsWith('user_')).map((m) => m.event!.type);
      expect(userEvents[0]).toBe('user_submitted_input');
      expect(userEvents).toContain('user_approved_next_step');
      expect(messages.some((m) => m.type === '@xstate.snapshot')).toBe(true);
    } finally {
      for (const client of wss.clients) client.terminate();
      await new Promise((r) => wss.close(r));
    }
  }, 15_000);

  it("'stately': says where to look, says once that it is unreachable, and exits", async () => {
    // Tests never reach the internet: Stately's socket is replaced by a closed local port.
    const run = await runChild('stately', 10_000, { STEWARD_STATELY_SOCKET: `ws://127.0.0.1:${await closedPort()}` });
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ state: 'done' });
    expect(run.stderr).toMatch(/Stately inspector: open https:\/\/stately\.ai\/registry\/inspect\/[0-9a-f-]{36}/);
    expect(run.stderr.match(/unreachable/g)?.length ?? 0).toBe(1);
  }, 15_000);
});

describe('inspect modes', () => {
  it('parses off, local, stately and WebSocket URLs, and names the valid ones otherwise', async () => {
    const { parseInspectMode, setupInspection } = await import('../../src/inspect/index.js');
    expect(['off', 'local', 'stately', 'ws://127.0.0.1:8080', 'wss://example.test/x'].map(parseInspectMode)).toHaveLength(5);
    expect(() => parseInspectMode('loud')).toThrow(/use off, local, stately or a WebSocket URL/);
    const off = setupInspection('off', () => {});
    expect(off.inspect).toBeUndefined();
    expect(await off.attach(createRuntime({ model: twoManagerRounds() }), undefined)).toBeUndefined();
    await off.stop();
  });
});
