/**
 * A fan-out over the protocols of `steward serve`: three independent workers proposed in one
 * reply wait as three items of one approval, and their artifacts as items of one review. Over
 * AG-UI (`@ag-ui/client`'s HttpAgent, its event verification on) each item is an interrupt of
 * its own, resumed on its own (the client makes a resume address every pending interrupt: the
 * others are cancelled, and stay open); over A2A (`@a2a-js/sdk`'s client) the input-required
 * status carries a data part per item and a message decides the item it names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Interrupt } from '@ag-ui/client';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { useTempDir } from '../support/temp.js';
import { ANA_TOKEN, serveForAna } from './protocol-server.js';
import { call, runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';
import { agUiAgent, runError, type RunRecord } from './ag-ui-client.js';
import { a2aClient, asTask, request, stateName } from './a2a-client.js';
import type { Task } from '@a2a-js/sdk';

const tmp = useTempDir('steward-fan-out-protocols-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function serve(name: string, model: TrioModel) {
  const store = new SqliteStore(tmp.path(`${name}.db`));
  const runtime = createRuntime({ model, store, packagesDir: trioPackage(tmp.path(`${name}-packages`)) });
  return serveForAna(runtime, store, open);
}

type Tab = ReturnType<typeof agUiAgent>;

/** Answers one of the tab's open interrupts; the client wants every pending one addressed, so the others are cancelled (they stay open). */
const answerOne = (tab: Tab, interrupt: Interrupt, payload: unknown) =>
  tab.run({
    resume: tab.agent.pendingInterrupts.map((i) =>
      i.id === interrupt.id ? { interruptId: i.id, status: 'resolved' as const, payload } : { interruptId: i.id, status: 'cancelled' as const },
    ),
  });

function ok(record: RunRecord) {
  expect(record.error, String(record.error)).toBeUndefined();
  expect(runError(record)).toBeUndefined();
}

const pending = (tab: Tab) => tab.agent.pendingInterrupts;
const byItem = (tab: Tab, item: string) => pending(tab).find((i) => (i.metadata as { steward: { item: string } }).steward.item === item)!;
const results = (record: RunRecord) =>
  Object.fromEntries(record.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [e.toolCallId, JSON.parse(e.content)]));

describe('a fan-out over the protocols', { timeout: 120_000 }, () => {
  it('AG-UI: an interrupt per step and per artifact, each resumed on its own; a repeat is harmless and never lands on another item', async () => {
    // Three steps that need approval, then (once south's was rejected) the three at once without approval, under new call ids.
    const again = {
      content: null,
      toolCalls: TRIO.map((w) => call('run_worker', { workerId: w, reason: `The ${w} note again.`, requiresApproval: false }, `again_${w}`)),
    };
    const model = new TrioModel([runTogether(TRIO, true), again], (id) => submitOwn(id));
    const server = await serve('ag-ui', model);
    const url = `${server.url}/ag-ui/trio`;
    const tab = agUiAgent(url, 'thread-trio', ANA_TOKEN);
    tab.agent.addMessage({ id: 'u1', role: 'user', content: 'Three notes, please.' });
    ok(await tab.run());

    const wait = tab.state.wait as number;
    expect(pending(tab).map((i) => [i.id, i.reason, i.toolCallId])).toEqual(TRIO.map((w) => [`thread-trio#w${wait}/item/run_${w}`, 'tool_call', `run_${w}`]));
    // Each interrupt concerns a run_worker call the client holds among the thread's messages.
    const calls = tab.agent.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
    expect(calls).toEqual(expect.arrayContaining(pending(tab).map((i) => i.toolCallId)));
    const south = byItem(tab, 'run_south');
    // The prompt and the schema name the worker and the item.
    expect(south.message).toBe('Run south (step run_south, 2 of 3 waiting): Write the south note.');
    expect(south.responseSchema?.properties.item).toMatchObject({ const: 'run_south' });
    expect(south.responseSchema?.description).toContain("south's step run_south");
    expect(south.metadata).toMatchObject({ steward: { waitingReason: 'approve_step', wait, item: 'run_south', workerId: 'south' } });

    // South rejected on its own (its answer names no item: its interrupt does); north and east still wait, under the same ids.
    const rejected = await answerOne(tab, south, { approved: false, reason: 'Not south.' });
    ok(rejected);
    expect(pending(tab).map((i) => i.id)).toEqual([`thread-trio#w${wait}/item/run_north`, `thread-trio#w${wait}/item/run_east`]);
    expect(tab.state.team.map((i: { item: string; status: string }) => [i.item, i.status])).toEqual([
      ['run_north', 'proposed'],
      ['run_east', 'proposed'],
    ]);
    // The rejection answers south's run_worker call, and only that one.
    expect(results(rejected)).toEqual({ run_south: { decision: 'user_rejected_next_step', approved: false, reason: 'Not south.', item: 'run_south' } });

    // South's resume sent again from another tab: a harmless repeat, applied to no other item.
    const other = agUiAgent(url, 'thread-trio', ANA_TOKEN);
    ok(await other.run({ resume: [{ interruptId: south.id, status: 'resolved', payload: { approved: false, reason: 'Not south.' } }] }));
    expect(other.agent.pendingInterrupts.map((i) => i.id)).toEqual(pending(tab).map((i) => i.id));
    // Another answer for south is stale: south was decided, and the answer lands nowhere.
    const changed = await agUiAgent(url, 'thread-trio', ANA_TOKEN).run({
      resume: [{ interruptId: south.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(runError(changed)).toMatchObject({ code: 'interrupt_stale' });
    expect(runError(changed)?.message).toContain('answered differently');
    // A payload that names another item than its interrupt's breaks that interrupt's schema.
    const crossed = await answerOne(tab, byItem(tab, 'run_north'), { approved: true, item: 'run_east' });
    expect(runError(crossed)).toMatchObject({ code: 'invalid_resume_payload' });
    expect(model.started.size).toBe(0);

    // North, then east with an edited task: the two approved workers run together; their artifacts wait, one interrupt each.
    ok(await answerOne(tab, byItem(tab, 'run_north'), { approved: true }));
    expect(pending(tab).map((i) => i.toolCallId)).toEqual(['run_east']);
    expect(model.started.size).toBe(0);
    ok(await answerOne(tab, byItem(tab, 'run_east'), { approved: true, reason: 'East, briefly.' }));
    expect([...model.started.keys()].sort()).toEqual(['east', 'north']);
    const reviewWait = tab.state.wait as number;
    const firstReview = pending(tab);
    expect(firstReview.map((i) => [i.reason, (i.metadata as { steward: { workerId: string } }).steward.workerId])).toEqual([
      ['steward:artifact_review', 'north'],
      ['steward:artifact_review', 'east'],
    ]);

    // Both accepted in one run: a resume may answer several interrupts, each its own send.
    ok(await tab.run({ resume: firstReview.map((i) => ({ interruptId: i.id, status: 'resolved' as const, payload: { accepted: true } })) }));

    // The second fan-out needs no approval: three artifacts under review, an interrupt each.
    const reviews = pending(tab);
    expect(reviews).toHaveLength(3);
    const artifacts = tab.state.team.map((i: { artifact: { id: string } }) => i.artifact.id) as string[];
    const next = tab.state.wait as number;
    expect(next).toBeGreaterThan(reviewWait);
    expect(reviews.map((i) => i.id)).toEqual(artifacts.map((a) => `thread-trio#w${next}/artifact/${a}`));
    const [northArtifact, southArtifact, eastArtifact] = reviews;
    expect(southArtifact!.message).toBe(`Review artifact ${artifacts[1]} by south (2 of 3 under review).`);
    expect(southArtifact!.responseSchema?.properties.artifactId).toMatchObject({ const: artifacts[1] });
    expect(southArtifact!.metadata).toMatchObject({
      steward: { waitingReason: 'review_artifact', artifactId: artifacts[1], workerId: 'south', item: 'again_south' },
    });

    ok(await answerOne(tab, southArtifact!, { accepted: false, reason: 'Too short.' }));
    expect(pending(tab).map((i) => i.id)).toEqual([northArtifact!.id, eastArtifact!.id]);
    // The rejection sent again: harmless, and north and east are still under review.
    ok(
      await agUiAgent(url, 'thread-trio', ANA_TOKEN).run({
        resume: [{ interruptId: southArtifact!.id, status: 'resolved', payload: { accepted: false, reason: 'Too short.' } }],
      }),
    );
    ok(await answerOne(tab, northArtifact!, { accepted: true, edits: { north: 'The north note, edited.' } }));
    expect(pending(tab).map((i) => i.id)).toEqual([eastArtifact!.id]);
    const last = await answerOne(tab, eastArtifact!, { accepted: true });
    ok(last);
    expect(last.events.at(-1)?.outcome).toEqual({ type: 'success' });
    expect(tab.state.phase).toBe('done');
    const statuses = Object.fromEntries(
      (tab.state.artifacts as { id: string; status: string }[]).filter((a) => artifacts.includes(a.id)).map((a) => [a.id, a.status]),
    );
    expect(statuses).toEqual({ [artifacts[0]!]: 'accepted', [artifacts[1]!]: 'rejected', [artifacts[2]!]: 'accepted' });
    expect(Object.fromEntries(model.started)).toEqual({ north: 2, south: 1, east: 2 });
  });

  it('A2A: the input-required status carries a data part per item; a message decides the item it names', async () => {
    const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
    const server = await serve('a2a', model);
    const client = await a2aClient(server.url, 'trio', ANA_TOKEN);
    let task = asTask(await client.sendMessage(request({ text: 'Three notes, please.' })));
    const items = (t: Task) =>
      (t.status?.message?.parts ?? []).flatMap((p) =>
        p.content?.$case === 'data' ? [p.content.value as { interrupt: Interrupt; item: { item: string; workerId: string; artifact?: { id: string } } }] : [],
      );
    const answer = async (data: unknown, metadata?: Record<string, unknown>) =>
      (task = asTask(await client.sendMessage(request({ data }, { taskId: task.id }, metadata))));

    expect(stateName(task.status?.state)).toBe('input-required');
    expect(items(task).map((d) => [d.item.item, d.item.workerId, d.interrupt.id])).toEqual(
      TRIO.map((w) => [`run_${w}`, w, `${task.id}#w${items(task)[0]!.interrupt.metadata!.steward.wait}/item/run_${w}`]),
    );
    // The status message names the wait itself: an answer names its item.
    expect(task.status?.message?.messageId).toMatch(/#w\d+$/);

    // An answer that names no item is refused before anything is sent, naming the items.
    const unnamed = await client.sendMessage(request({ data: { approved: true } }, { taskId: task.id })).then(asTask, (error: unknown) => error);
    expect(String(unnamed)).toContain('name one with "item"');

    await answer({ item: 'run_south', approved: false, reason: 'Not south.' });
    expect(items(task).map((d) => d.item.item)).toEqual(['run_north', 'run_east']);
    // An item's interrupt id names the item for an answer that names none.
    const north = items(task)[0]!.interrupt;
    // A message whose interrupt id names north but whose data names east is for neither: refused, nothing sent.
    const crossed = await client
      .sendMessage(request({ data: { item: 'run_east', approved: true } }, { taskId: task.id }, { steward: { interruptId: north.id } }))
      .then(asTask, (error: unknown) => error);
    expect(String(crossed)).toContain('is for item "run_north"');
    await answer({ approved: true }, { steward: { interruptId: north.id } });
    expect(items(task).map((d) => d.item.item)).toEqual(['run_east']);
    // South's answer again: south was decided, so nothing lands on east.
    const again = await client
      .sendMessage(request({ data: { item: 'run_south', approved: false, reason: 'Not south.' } }, { taskId: task.id }))
      .then(asTask, (error: unknown) => error);
    expect(JSON.stringify(again)).toContain('"code":"event_refused"');
    expect(model.started.size).toBe(0);
    await answer({ item: 'run_east', approved: true });
    expect([...model.started.keys()].sort()).toEqual(['east', 'north']);

    // The review: each artifact's bodies and a data part per artifact.
    const reviewed = items(task);
    expect(reviewed.map((d) => [d.interrupt.reason, d.item.workerId])).toEqual([
      ['steward:artifact_review', 'north'],
      ['steward:artifact_review', 'east'],
    ]);
    const bodies = (task.status?.message?.parts ?? []).flatMap((p) => (p.content?.$case === 'text' && p.metadata?.artifactId ? [p.content.value] : []));
    expect(bodies).toEqual(['The north note.', 'The east note.']);
    await answer({ artifactId: reviewed[1]!.item.artifact!.id, accepted: true });
    expect(items(task).map((d) => d.item.workerId)).toEqual(['north']);
    await answer({ artifactId: reviewed[0]!.item.artifact!.id, accepted: false, reason: 'Longer.' });
    expect(stateName(task.status?.state)).toBe('completed');
  });
});
