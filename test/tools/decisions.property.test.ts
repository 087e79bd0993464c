/**
 * Decisions on a worker's MCP tool calls, as a property (fast-check; a failure prints its seed
 * and the shrunk case): one runtime and one notes server (test/tools/servers/notes.mjs records
 * every call it receives), many sessions, each a worker reply of 1–5 calls of write_note,
 * delete_note and read_note and a random order of decisions — approve, approve with edited
 * arguments, reject — among refused ones (a call that is not there, one already decided, an
 * edit the tool's schema refuses, a decision naming another wait). Whatever the order:
 * the server receives exactly the approved calls, with the arguments they were approved with,
 * in the model's order, and nothing of a rejected one; a refused decision changes nothing; the
 * model gets exactly one tool result per call.
 */
import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/index.js';
import type { ChatMessage, Model, ModelReply, ModelRequest, UserEvent } from '../../src/machine.js';
import { notesPackage } from './notes-package.js';

type Tool = 'write_note' | 'delete_note' | 'read_note';
type Decision = 'approve' | 'edit' | 'reject';
type Refusal = 'unknown' | 'again' | 'bad_edit' | 'other_wait';

interface Case {
  calls: { tool: Tool; path: string; text: string }[];
  /** One decision per call a person decides, and the order they are made in (a permutation, by sort keys). */
  decisions: { decision: Decision; key: number }[];
  /** Refused decisions, each sent before the decision at `before` (mod the count). */
  refusals: { refusal: Refusal; before: number }[];
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  calls: fc.array(
    fc.record({
      tool: fc.constantFrom<Tool>('write_note', 'delete_note', 'read_note'),
      path: fc.constantFrom('a.md', 'b.md', 'c.md'),
      text: fc.string({ minLength: 1, maxLength: 8 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  decisions: fc.array(fc.record({ decision: fc.constantFrom<Decision>('approve', 'edit', 'reject'), key: fc.double({ noNaN: true }) }), {
    minLength: 5,
    maxLength: 5,
  }),
  refusals: fc.array(fc.record({ refusal: fc.constantFrom<Refusal>('unknown', 'again', 'bad_edit', 'other_wait'), before: fc.nat(10) }), { maxLength: 3 }),
});

const argsOf = (c: Case['calls'][number], prefix: string): Record<string, unknown> =>
  c.tool === 'write_note' ? { path: `${prefix}/${c.path}`, text: c.text } : { path: `${prefix}/${c.path}` };

/**
 * The model of every session: the manager runs the keeper; the worker's first round makes the
 * case's calls, its second (given their results) submits. The case is named in the request.
 */
class CaseModel implements Model {
  readonly label = 'case model';
  readonly cases = new Map<string, Case>();
  /** The worker's second request of each case: the tool results it was given. */
  readonly results = new Map<string, Extract<ChatMessage, { role: 'tool' }>[]>();

  complete(request: ModelRequest): Promise<ModelReply> {
    const tag = /case-\d+/.exec(JSON.stringify(request.messages))?.[0];
    const c = tag ? this.cases.get(tag) : undefined;
    if (!tag || !c) throw new Error('A request of no known case.');
    const call = (id: string, name: string, args: unknown) => ({ id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });
    if (request.agent === 'manager')
      return Promise.resolve({ content: null, toolCalls: [call('m1', 'run_worker', { workerId: 'keeper', reason: `Keep ${tag}.`, requiresApproval: false })] });
    const tools = request.messages.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
    if (tools.length === 0)
      return Promise.resolve({ content: null, toolCalls: c.calls.map((x, i) => call(`${tag}-c${i}`, `notes__${x.tool}`, argsOf(x, tag))) });
    this.results.set(tag, tools);
    return Promise.resolve({ content: null, toolCalls: [call('s1', 'submit', { outputs: { note: 'Kept.' } })] });
  }
}

const notes = notesPackage();
const model = new CaseModel();
const runtime: Runtime = createRuntime({ model, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} } });
afterAll(() => runtime.close());

let cases = 0;

it('only the approved calls reach the server, as approved, in the model’s order; a refused decision changes nothing; one tool result per call', async () => {
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const tag = `case-${++cases}`;
      model.cases.set(tag, c);
      const ids = c.calls.map((_, i) => `${tag}-c${i}`);
      const session = await runtime.createSession({ packageId: 'notes' });
      try {
        const first = await session.send({ type: 'user_submitted_input', text: `Keep my notes (${tag}).` });
        expect(first.ok).toBe(true);
        // Reads of a trusted server run without asking; writes and deletes wait for a person.
        const decided = c.calls.flatMap((x, i) => (x.tool === 'read_note' ? [] : [i]));
        expect(session.view().state).toBe(decided.length ? 'waiting_user.approve_tool' : 'waiting_user.review_artifact');
        const wait = session.view().wait;
        const order = decided.map((i, n) => ({ i, ...c.decisions[n]! })).sort((a, b) => a.key - b.key || a.i - b.i);
        const approvedArgs = new Map<number, Record<string, unknown>>();
        const done: number[] = [];
        for (let n = 0; n < order.length; n++) {
          for (const r of c.refusals.filter((x) => x.before % order.length === n)) await refused(r.refusal, n);
          const { i, decision } = order[n]!;
          const event: UserEvent =
            decision === 'reject'
              ? { type: 'user_rejected_tool_call', callId: ids[i]!, reason: `No ${i}.` }
              : {
                  type: 'user_approved_tool_call',
                  callId: ids[i]!,
                  ...(decision === 'edit'
                    ? { arguments: { ...argsOf(c.calls[i]!, tag), ...(c.calls[i]!.tool === 'write_note' ? { text: `edited ${i}` } : {}) } }
                    : {}),
                };
          const result = await session.send({ ...event, wait });
          expect(result.ok, JSON.stringify(result.ok ? null : result.error)).toBe(true);
          if (event.type === 'user_approved_tool_call') approvedArgs.set(i, event.arguments ?? argsOf(c.calls[i]!, tag));
          done.push(i);
          // The wait stays the same one until the last decision.
          if (n < order.length - 1) expect([session.view().state, session.view().wait]).toEqual(['waiting_user.approve_tool', wait]);
        }
        expect(session.view().state).toBe('waiting_user.review_artifact');

        const expected = c.calls.flatMap((x, i): { tool: Tool; args: Record<string, unknown> }[] =>
          x.tool === 'read_note' ? [{ tool: x.tool, args: argsOf(x, tag) }] : approvedArgs.has(i) ? [{ tool: x.tool, args: approvedArgs.get(i)! }] : [],
        );
        const received = notes.calls().filter((x) => String(x.args.path).startsWith(`${tag}/`));
        expect(received).toEqual(expected);

        const results = model.results.get(tag) ?? [];
        expect(results.map((m) => m.tool_call_id).sort()).toEqual([...ids].sort());
        for (const [i, id] of ids.entries()) {
          const content = String(results.find((m) => m.tool_call_id === id)?.content);
          const rejected = c.calls[i]!.tool !== 'read_note' && !approvedArgs.has(i);
          if (rejected) expect(content).toBe(`Error: a person rejected this call; it did not run. Their reason: No ${i}.`);
          else expect(content).not.toMatch(/^Error/);
        }

        /** A decision the session must refuse, leaving every call as it was. */
        async function refused(kind: Refusal, n: number): Promise<void> {
          const before = session.view().toolCalls;
          const pending = order.slice(n).map((o) => o.i);
          const target = pending[0]!;
          let event: UserEvent;
          if (kind === 'again' && done.length > 0) event = { type: 'user_approved_tool_call', callId: ids[done[0]!]! };
          else if (kind === 'bad_edit') event = { type: 'user_approved_tool_call', callId: ids[target]!, arguments: { note: 'no path' } };
          else if (kind === 'other_wait') event = { type: 'user_rejected_tool_call', callId: ids[target]!, wait: (wait ?? 0) + 1 };
          else event = { type: 'user_rejected_tool_call', callId: `${tag}-c99` };
          const result = await session.send(event);
          expect(result.ok, `${kind} was applied: ${JSON.stringify(event)}`).toBe(false);
          expect(session.view().toolCalls).toEqual(before);
        }
      } finally {
        await session.close();
      }
    }),
    { numRuns: 50 },
  );
}, 120_000);
