/**
 * A fan-out: a manager reply with several independent run_worker calls runs the workers at
 * once, each decided on its own, each artifact reviewed on its own.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { sessionAuditRows } from '../../src/runtime/audit-rows.js';
import { fakeClock } from '../support/fake-clock.js';
import { until } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';

const temp = useTempDir('steward-fan-out-');

/** Resolves once `count` calls wait on it: a worker that ran alone would wait forever. */
function barrier(count: number) {
  let waiting = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++waiting === count) open();
    return opened;
  };
}

describe('a fan-out of independent workers', () => {
  it('runs three independent workers at once, and reviews their three artifacts one by one', async () => {
    const together = barrier(3);
    const model = new TrioModel([runTogether(TRIO)], async (id) => {
      await together();
      return submitOwn(id);
    });
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs')) }).createSession({ packageId: 'trio' });
    const ran = await session.send({ type: 'user_submitted_input', text: 'Three notes, please.' });
    expect(ran).toMatchObject({ ok: true, view: { state: 'waiting_user.review_artifact' } });
    expect(model.maxInFlight).toBe(3);
    const pending = session.view().artifacts.filter((a) => a.status === 'pending_review');
    expect(pending.map((a) => a.workerId).sort()).toEqual([...TRIO].sort());

    const [a, b, c] = pending;
    expect(await session.send({ type: 'user_accepted_artifact', artifactId: a!.id })).toMatchObject({
      ok: true,
      view: { state: 'waiting_user.review_artifact' },
    });
    expect(await session.send({ type: 'user_rejected_artifact', artifactId: b!.id, reason: 'Too short.' })).toMatchObject({
      ok: true,
      view: { state: 'waiting_user.review_artifact' },
    });
    // A decision on an artifact already decided is refused and changes nothing.
    expect(await session.send({ type: 'user_accepted_artifact', artifactId: a!.id })).toMatchObject({ ok: false, error: { code: 'event_refused' } });
    const done = await session.send({ type: 'user_accepted_artifact', artifactId: c!.id, edits: { [c!.workerId]: 'Edited.' } });
    expect(done).toMatchObject({ ok: true, view: { state: 'done' } });
    const statuses = Object.fromEntries(session.view().artifacts.map((x) => [x.workerId, x.status]));
    expect(statuses).toEqual({ [a!.workerId]: 'accepted', [b!.workerId]: 'rejected', [c!.workerId]: 'accepted' });
    expect(Object.fromEntries(TRIO.map((t) => [t, model.started.get(t)]))).toEqual({ north: 1, south: 1, east: 1 });
  });

  it('refuses a dependent call by the rule workersIndependent, naming the tag, while the others run', async () => {
    const seen: string[] = [];
    const model = new TrioModel([runTogether(['north', 'south', 'summary'])], (id) => {
      seen.push(id);
      return submitOwn(id);
    });
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs2')) }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(seen.sort()).toEqual(['north', 'south']);
    const manager = await session.transcript('manager');
    const refused = manager.find((m) => m.role === 'tool' && m.tool_call_id === 'run_summary');
    expect(refused?.content).toContain('"north" (an input of summary) is not yet');
    expect(
      session
        .view()
        .artifacts.map((a) => a.workerId)
        .sort(),
    ).toEqual(['north', 'south']);
  });

  it('waits once with an item per call when approval is needed; decided over three sends, one rejected', async () => {
    const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs3')) }).createSession({ packageId: 'trio' });
    const proposed = await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(proposed).toMatchObject({ ok: true, view: { state: 'waiting_user.approve_step' } });
    const wait = session.view().wait;
    const noItem = await session.send({ type: 'user_approved_next_step', wait });
    expect(noItem).toMatchObject({ ok: false, error: { code: 'event_refused' } });
    expect(noItem.ok ? '' : noItem.error.message).toContain('name the step with "item"');
    expect(await session.send({ type: 'user_approved_next_step', wait, item: 'run_north' })).toMatchObject({
      ok: true,
      view: { state: 'waiting_user.approve_step' },
    });
    expect(await session.send({ type: 'user_rejected_next_step', wait, item: 'run_south', reason: 'Not south.' })).toMatchObject({ ok: true });
    expect(model.started.size).toBe(0);
    const ran = await session.send({ type: 'user_approved_next_step', wait, item: 'run_east', edits: { reason: 'East, briefly.' } });
    expect(ran).toMatchObject({ ok: true, view: { state: 'waiting_user.review_artifact' } });
    expect([...model.started.keys()].sort()).toEqual(['east', 'north']);
  });
});

describe('the fan-in', () => {
  it('reviews the artifacts first, then the questions of a branch that asked; that worker then goes on alone', async () => {
    const asked = {
      content: null,
      toolCalls: [{ id: 'ask_south', type: 'function' as const, function: { name: 'ask_user', arguments: JSON.stringify({ questions: ['Which south?'] }) } }],
    };
    const model = new TrioModel([runTogether(TRIO)], (id, request) => {
      const answered = request.messages.some((m) => typeof m.content === 'string' && m.content.includes('The deep south.'));
      return id === 'south' && !answered ? asked : submitOwn(id);
    });
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs4')) }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(session.view()).toMatchObject({ state: 'waiting_user.review_artifact' });
    expect(session.view().team?.map((t) => [t.workerId, t.status])).toEqual([
      ['north', 'submitted'],
      ['south', 'asked'],
      ['east', 'submitted'],
    ]);
    for (const item of session.view().team!.filter((t) => t.status === 'submitted')) {
      expect(await session.send({ type: 'user_accepted_artifact', artifactId: item.artifact!.id })).toMatchObject({ ok: true });
    }
    expect(session.view()).toMatchObject({ state: 'waiting_user.worker_questions', pendingStep: { workerId: 'south' }, questions: [{ text: 'Which south?' }] });
    const q = session.view().questions![0]!.id;
    const reviewed = await session.send({ type: 'user_answered_questions', answers: { [q]: 'The deep south.' } });
    expect(reviewed).toMatchObject({ ok: true, view: { state: 'waiting_user.review_artifact', artifact: { workerId: 'south' } } });
    expect(session.view().team).toBeUndefined();
    const done = await session.send({ type: 'user_accepted_artifact', artifactId: session.view().artifact!.id });
    expect(done).toMatchObject({ ok: true, view: { state: 'done' } });
    expect(session.view().artifacts.map((a) => [a.workerId, a.status])).toEqual([
      ['north', 'accepted'],
      ['east', 'accepted'],
      ['south', 'accepted'],
    ]);
    expect(Object.fromEntries(model.started)).toEqual({ north: 1, south: 2, east: 1 });
  });

  it('a branch whose model call fails stops on its own (the manager is told); the others are reviewed', async () => {
    const model = new TrioModel([runTogether(TRIO)], (id) => {
      if (id === 'east') throw new Error('the east model is down');
      return submitOwn(id);
    });
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs5')) }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(session.view().team?.map((t) => t.workerId)).toEqual(['north', 'south']);
    for (const item of [...session.view().team!]) await session.send({ type: 'user_accepted_artifact', artifactId: item.artifact!.id });
    expect(session.view().state).toBe('done');
    const manager = await session.transcript('manager');
    expect(manager.some((m) => typeof m.content === 'string' && m.content.includes('The worker east failed: the east model is down'))).toBe(true);
  });
});

describe('a fan-out is durable', () => {
  it('a fork from inside a fan-out runs only the branches that had not finished at that entry', async () => {
    const store = new SqliteStore(temp.path('fork.db'));
    const packagesDir = trioPackage(temp.path('pkgs6'));
    const original = new TrioModel([runTogether(TRIO)], (id) => submitOwn(id));
    const session = await createRuntime({ model: original, store, packagesDir }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    const journal = await store.journal(session.id);
    const firstDone = journal.find((e) => e.type.startsWith('xstate.done.actor.branch:'))!;
    expect(firstDone.state).toBe('running.team.working');
    const finished = firstDone.type.slice('xstate.done.actor.branch:run_'.length);

    const again = new TrioModel([], (id) => submitOwn(id));
    const fork = await createRuntime({ model: again, store, packagesDir }).forkSession(session.id, { atSeq: firstDone.seq });
    const view = await fork.settled();
    expect(view.state).toBe('waiting_user.review_artifact');
    expect([...again.started.keys()].sort()).toEqual(TRIO.filter((t) => t !== finished).sort());
    expect(view.team?.map((t) => t.status)).toEqual(['submitted', 'submitted', 'submitted']);
    // Each branch's conversation is archived under its own key; a submitted one leaves the snapshot.
    for (const id of TRIO) {
      // Keyed by the manager's round that proposed the fan-out (the first) and the item.
      const archived = await store.archived(session.id, 'message', `worker:1:run_${id}`);
      expect(archived.map((m) => (m.value as { role: string }).role)).toEqual(['assistant', 'tool']);
    }
    expect(view.team).toBeDefined();
    await store.close();
  });
});

describe('a fan-out in traces', () => {
  it("each branch's rounds are chat spans under an invoke_agent span of its own worker, open at once", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const together = barrier(3);
    const model = new TrioModel([runTogether(TRIO)], async (id) => {
      await together();
      return submitOwn(id);
    });
    const runtime = createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs7')), tracerProvider: provider });
    const session = await runtime.createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const agents = spans.filter((s) => s.name.startsWith('invoke_agent '));
    expect(agents.map((a) => a.name).sort()).toEqual(['invoke_agent east', 'invoke_agent manager', 'invoke_agent north', 'invoke_agent south']);
    for (const id of TRIO) {
      const agent = agents.find((a) => a.name === `invoke_agent ${id}`)!;
      const chats = spans.filter((s) => s.parentSpanContext?.spanId === agent.spanContext().spanId && s.name.startsWith('chat '));
      expect(chats, id).toHaveLength(1);
    }
    // The three workers' spans overlap: each started before any of them ended.
    const workers = agents.filter((a) => a.name !== 'invoke_agent manager');
    const lastStart = Math.max(...workers.map((w) => hrMs(w.startTime)));
    const firstEnd = Math.min(...workers.map((w) => hrMs(w.endTime)));
    expect(lastStart).toBeLessThanOrEqual(firstEnd);
  });
});

const hrMs = ([s, ns]: [number, number]) => s * 1e3 + ns / 1e6;

describe("a fan-out's items and who decides them", () => {
  it("each item is decided by its own worker's approvers and reviewers", async () => {
    const dir = trioPackage(temp.path('pkgs8'), 'always');
    const north = join(dir, 'trio', 'workers', 'north.md');
    writeFileSync(north, readFileSync(north, 'utf8').replace('outputTags: [north]\n', 'outputTags: [north]\napprovers: [ops]\nreviewers: [ops]\n'));
    const model = new TrioModel([runTogether(['north', 'south'])], (id) => submitOwn(id));
    const session = await createRuntime({ model, packagesDir: dir }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(session.view()).toMatchObject({ state: 'waiting_user.approve_step', deciders: null });
    // Anyone may decide south's step; north's only ops (or admin).
    expect(await session.send({ type: 'user_approved_next_step', item: 'run_south', by: 'bo', groups: ['writers'] })).toMatchObject({ ok: true });
    const refused = await session.send({ type: 'user_approved_next_step', item: 'run_north', by: 'bo', groups: ['writers'] });
    expect(refused).toMatchObject({ ok: false, error: { code: 'not_a_decider' } });
    expect(refused.ok ? '' : refused.error.message).toContain('only the groups ops');
    expect(await session.send({ type: 'user_approved_next_step', item: 'run_north', by: 'ana', groups: ['ops'] })).toMatchObject({
      ok: true,
      view: { state: 'waiting_user.review_artifact' },
    });
    const artifactOf = (worker: string) => session.view().team!.find((t) => t.workerId === worker)!.artifact!.id;
    const northArtifact = artifactOf('north');
    expect(await session.send({ type: 'user_accepted_artifact', artifactId: northArtifact, by: 'bo', groups: ['writers'] })).toMatchObject({
      ok: false,
      error: { code: 'not_a_decider' },
    });
    expect(await session.send({ type: 'user_accepted_artifact', artifactId: artifactOf('south'), by: 'bo', groups: ['writers'] })).toMatchObject({ ok: true });
    expect(await session.send({ type: 'user_accepted_artifact', artifactId: northArtifact, by: 'ana', groups: ['admin'] })).toMatchObject({
      ok: true,
      view: { state: 'done' },
    });
  });
});

describe("a fan-out's deadlines", () => {
  it('the items still waiting when the deadline passes are rejected; those decided stand; then the fan-in review expires the same way', async () => {
    const clock = fakeClock();
    const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
    const deadlines = { approve_step: { after: '10m', outcome: 'reject' as const }, review_artifact: { after: '1h', outcome: 'reject' as const } };
    const runtime = createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs9')), clock, deadlines });
    const session = await runtime.createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(session.view()).toMatchObject({ state: 'waiting_user.approve_step', deadline: { outcome: 'reject', after: '10m' } });
    await session.send({ type: 'user_approved_next_step', item: 'run_north' });
    await clock.advance(10 * 60_000);
    const reviewed = await session.settled();
    expect(reviewed).toMatchObject({ state: 'waiting_user.review_artifact', deadline: { outcome: 'reject', after: '1h' } });
    expect([...model.started.keys()]).toEqual(['north']);
    const manager = await session.transcript('manager');
    for (const worker of ['south', 'east'])
      expect(manager.some((m) => typeof m.content === 'string' && m.content.includes(`run_worker(${worker}) within 10m, so it was rejected`))).toBe(true);
    await clock.advance(60 * 60_000);
    const after = await session.settled();
    expect(after.artifacts.map((a) => [a.workerId, a.status])).toEqual([['north', 'rejected']]);
    expect(after.state).toBe('done');
  });
});

describe('a fan-out in live events', () => {
  it("numbers each branch's round as it starts, and its round_finished carries the same number and worker", async () => {
    const together = barrier(3);
    const model = new TrioModel([runTogether(TRIO)], async (id) => {
      await together();
      return submitOwn(id);
    });
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs10')) }).createSession({ packageId: 'trio' });
    const rounds: { type: string; workerId: string | null; round: number }[] = [];
    session.subscribe((e) => {
      if (e.type === 'round_started' || e.type === 'round_finished') rounds.push({ type: e.type, workerId: e.workerId, round: e.round });
    });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    const started = rounds.filter((r) => r.type === 'round_started' && r.workerId !== null);
    expect(started.map((r) => r.round)).toEqual([2, 3, 4]);
    for (const r of started) expect(rounds.filter((f) => f.type === 'round_finished' && f.workerId === r.workerId).map((f) => f.round)).toEqual([r.round]);
  });
});

describe("a fan-out's streamed replies", () => {
  it("each worker's text and draft reach listeners as its own, while the workers write at once", async () => {
    const together = barrier(3);
    const model = new TrioModel([runTogether(TRIO)], async (id, request) => {
      await together();
      // Interleaved with the others: each piece is sent after a turn of the event loop.
      for (const piece of [`${id} thinks `, `${id} writes`]) {
        await new Promise((resolve) => setImmediate(resolve));
        request.onTextDelta?.(piece);
      }
      const args = JSON.stringify({ outputs: { [id]: `The ${id} note.` } });
      for (let i = 0; i < args.length; i += 7) {
        await new Promise((resolve) => setImmediate(resolve));
        request.onToolCallDelta?.({ index: 0, ...(i === 0 ? { id: `submit_${id}`, name: 'submit' } : {}), arguments: args.slice(i, i + 7) });
      }
      return submitOwn(id);
    });
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs11')) }).createSession({ packageId: 'trio' });
    const text = new Map<string, string>();
    const drafts = new Map<string, string>();
    session.subscribe((e) => {
      if (e.type === 'text_delta' && e.workerId) text.set(e.workerId, (text.get(e.workerId) ?? '') + e.text);
      if (e.type === 'artifact_delta') drafts.set(`${e.worker}/${e.tag}`, (drafts.get(`${e.worker}/${e.tag}`) ?? '') + e.delta);
    });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(Object.fromEntries(text)).toEqual(Object.fromEntries(TRIO.map((id) => [id, `${id} thinks ${id} writes`])));
    expect(Object.fromEntries(drafts)).toEqual(Object.fromEntries(TRIO.map((id) => [`${id}/${id}`, `The ${id} note.`])));
  });
});

describe('a fan-out and the burst', () => {
  it('starts its branches as far as the burst has room; the others stop as a worker does at the limit, and the manager is told', async () => {
    const model = new TrioModel([runTogether(TRIO)], (id) => submitOwn(id));
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs12')) }).createSession({ packageId: 'trio', maxBurst: 2 });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    // The manager's round used one of the two: one branch starts.
    expect([...model.started.keys()]).toEqual(['north']);
    expect(session.view()).toMatchObject({ state: 'waiting_user.review_artifact', burst: 2 });
    expect(session.view().notice).toContain('used all 2 rounds');
    const manager = await session.transcript('manager');
    for (const worker of ['south', 'east'])
      expect(manager.some((m) => typeof m.content === 'string' && m.content.includes(`The worker ${worker} used all 2 rounds`))).toBe(true);
  });
});

describe("a fan-out's audit trail", () => {
  it('has a row per item decided, each naming its subject, and the live decision events name the item', async () => {
    const store = new SqliteStore(temp.path('audit.db'));
    const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
    const runtime = createRuntime({ model, store, packagesDir: trioPackage(temp.path('pkgs13')) });
    const session = await runtime.createSession({ packageId: 'trio' });
    const decided: { reason: string; item?: string }[] = [];
    session.subscribe((e) => {
      if (e.type === 'decision') decided.push({ reason: e.reason, ...(e.item ? { item: e.item } : {}) });
    });
    await session.send({ type: 'user_submitted_input', text: 'Notes.', by: 'ana' });
    await session.send({ type: 'user_approved_next_step', item: 'run_north', by: 'ana' });
    await session.send({ type: 'user_rejected_next_step', item: 'run_south', reason: 'No.', by: 'bo' });
    await session.send({ type: 'user_approved_next_step', item: 'run_east', by: 'ana' });
    const artifacts = session.view().team!.map((t) => t.artifact!.id);
    await session.send({ type: 'user_accepted_artifact', artifactId: artifacts[0]!, by: 'ana' });
    await session.send({ type: 'user_rejected_artifact', artifactId: artifacts[1]!, reason: 'Thin.', by: 'bo' });
    expect(decided).toEqual([
      { reason: 'intake' },
      { reason: 'approve_step', item: 'run_north' },
      { reason: 'approve_step', item: 'run_south' },
      { reason: 'approve_step', item: 'run_east' },
      { reason: 'review_artifact', item: artifacts[0] },
      { reason: 'review_artifact', item: artifacts[1] },
    ]);
    const rows = [...(await sessionAuditRows(runtime, store, session.id))];
    expect(rows.map((r) => [r.waitingReason, r.decision, r.subject, r.by])).toEqual([
      ['intake', 'submitted', null, 'ana'],
      ['approve_step', 'approved', 'north', 'ana'],
      ['approve_step', 'rejected', 'south', 'bo'],
      ['approve_step', 'approved', 'east', 'ana'],
      ['review_artifact', 'accepted', artifacts[0], 'ana'],
      ['review_artifact', 'rejected', artifacts[1], 'bo'],
    ]);
    await store.close();
  });
});

describe('review findings, each a scenario', () => {
  const say = (text: string) => ({ content: text, toolCalls: [] });

  it("a review deadline of a held worker's own artifact rejects it as a single review's would, with the other branch still held", async () => {
    const clock = fakeClock();
    const asks = (id: string) => ({
      content: null,
      toolCalls: [{ id: `ask_${id}`, type: 'function' as const, function: { name: 'ask_user', arguments: JSON.stringify({ questions: [`Which ${id}?`] }) } }],
    });
    const model = new TrioModel([runTogether(['north', 'south'])], (id, request) =>
      request.messages.some((m) => typeof m.content === 'string' && m.content.includes('This one.')) ? submitOwn(id) : asks(id),
    );
    const deadlines = { review_artifact: { after: '1h', outcome: 'reject' as const } };
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs14')), clock, deadlines }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    expect(session.view()).toMatchObject({ state: 'waiting_user.worker_questions', pendingStep: { workerId: 'north' } });
    const q = session.view().questions![0]!.id;
    await session.send({ type: 'user_answered_questions', answers: { [q]: 'This one.' } });
    expect(session.view()).toMatchObject({ state: 'waiting_user.review_artifact', artifact: { workerId: 'north' } });
    await clock.advance(60 * 60_000);
    const after = await session.settled();
    expect(after).toMatchObject({ state: 'waiting_user.revision', artifact: { workerId: 'north', status: 'rejected' } });
    expect(after.team?.map((t) => [t.workerId, t.status])).toEqual([['south', 'asked']]);
  });

  it('a call id no one could name back (too long, or with spaces) is renamed before it becomes an item', async () => {
    const long = `run_${'x'.repeat(250)}`;
    const reply = runTogether(['north', 'south']);
    reply.toolCalls[0]!.id = long;
    reply.toolCalls[1]!.id = ' run_south ';
    const model = new TrioModel([reply], (id) => submitOwn(id));
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs15')) }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    const items = session.view().team!.map((t) => t.item);
    for (const item of items) expect(item.length <= 200 && item.trim() === item).toBe(true);
  });

  it("a branch stopped at the burst keeps its last reply in the session's history", async () => {
    const store = new SqliteStore(temp.path('stopped.db'));
    const model = new TrioModel([runTogether(['north', 'south'])], (id) => (id === 'north' ? say('NORTH THINKS ALOUD') : new Promise(() => {})));
    const runtime = createRuntime({ model, store, packagesDir: trioPackage(temp.path('pkgs16')) });
    const session = await runtime.createSession({ packageId: 'trio', maxBurst: 3 });
    void session.send({ type: 'user_submitted_input', text: 'Notes.' });
    await until(async () => (await store.journal(session.id)).some((e) => e.type === 'xstate.done.actor.branch:run_north'), 'north replied');
    await session.journalled();
    const worker = await store.archived(session.id, 'message', 'worker');
    expect(worker.some((m) => (m.value as { content?: unknown }).content === 'NORTH THINKS ALOUD')).toBe(true);
    session.stop();
    await store.close();
  });
});
