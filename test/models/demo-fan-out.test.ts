/**
 * The offline demo model proposes the workers that are independent now together (a fan-out),
 * as the rule workersIndependent decides: on the bundled research-brief, the three researchers
 * run at once, then the writer alone.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { runnableTogether } from '../../src/models/demo-fan-out.js';
import { loadPackages } from '../../src/skills/index.js';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { sayYes } from '../support/demo-autopilot.js';
import type { Session } from '../../src/runtime/session.js';
import type { SessionView } from '../../src/core/view.js';

const RESEARCHERS = ['fact-finder', 'angle-finder', 'risk-finder'];

/**
 * The demo model, its worker calls held at a gate until as many are in flight as the phase
 * expects (3, then 1): a demo that ran the researchers one by one never opens the first gate.
 */
class GatedDemo implements Model {
  readonly label = 'gated demo';
  readonly demo = new DemoModel();
  inFlight = 0;
  maxInFlight = 0;
  readonly phases: number[] = [];
  private held: (() => void)[] = [];
  constructor(private readonly expected: number[]) {}

  async complete(request: ModelRequest): Promise<ModelReply> {
    if (request.agent === 'manager') return this.demo.complete(request);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise<void>((resolve) => {
      this.held.push(resolve);
      if (this.held.length === (this.expected[0] ?? 1)) {
        this.phases.push(this.held.length);
        this.expected.shift();
        for (const release of this.held.splice(0)) release();
      }
    });
    try {
      return await this.demo.complete(request);
    } finally {
      this.inFlight--;
    }
  }
}

/** Plays the user to done; the views of the waits it met. */
const autopilot = async (session: Session, request: string): Promise<SessionView[]> => (await sayYes(session, request)).map((s) => s.view);

describe('the demo model and fan-outs', () => {
  it('runs the three researchers of research-brief at once, then the writer, to done', async () => {
    const model = new GatedDemo([3, 1]);
    const session = await createRuntime({ model }).createSession({ packageId: 'research-brief' });
    const views = await autopilot(session, 'Should a small team move its service from REST to gRPC?');

    expect(views.at(-1)!.state).toBe('done');
    expect(model.phases).toEqual([3, 1]);
    expect(model.maxInFlight).toBe(3);
    // One wait proposed the three researchers as items, and one review held their three artifacts.
    const proposal = views.find((v) => v.waitingReason === 'approve_step' && v.team?.length === 3);
    expect(proposal?.team?.map((t) => t.workerId)).toEqual(RESEARCHERS);
    const fanIn = views.find((v) => v.waitingReason === 'review_artifact' && v.team?.filter((t) => t.status === 'submitted').length === 3);
    expect(fanIn).toBeDefined();
    const artifacts = session.view().artifacts;
    expect(artifacts.map((a) => [a.workerId, a.status])).toEqual([...RESEARCHERS, 'writer'].map((w) => [w, 'accepted']));
  }, 30_000);

  it('runs one worker per reply when the package is a chain, or when fan-outs are off', async () => {
    const chain = await createRuntime({ model: new GatedDemo([1, 1, 1, 1]) }).createSession({ packageId: 'short-story' });
    const chainViews = await autopilot(chain, 'A lighthouse story.');
    expect(chainViews.at(-1)!.state).toBe('done');
    expect(chainViews.some((v) => v.team)).toBe(false);

    const model = new DemoModel({ fanOut: false });
    const one = await createRuntime({ model }).createSession({ packageId: 'research-brief' });
    const views = await autopilot(one, 'REST or gRPC?');
    expect(views.at(-1)!.state).toBe('done');
    expect(views.some((v) => v.team)).toBe(false);
    expect(one.view().artifacts.map((a) => a.workerId)).toEqual([...RESEARCHERS, 'writer']);
  });

  it('asks the rule: independent workers join, a worker that reads another one’s tag or lacks an input does not', () => {
    const workers = loadPackages().get('research-brief')!.workers;
    const all = workers.map((w) => w.id);
    expect(runnableTogether(workers, all, ['request'])).toEqual(RESEARCHERS);
    // The writer reads facts, which the fact-finder (chosen first) writes.
    expect(runnableTogether(workers, ['fact-finder', 'writer'], ['request', 'facts', 'angles', 'risks'])).toEqual(['fact-finder']);
    // An input of the first (risks, of the writer) is not on the board yet: nothing joins it.
    expect(runnableTogether(workers, ['writer', 'angle-finder'], ['request', 'facts', 'angles'])).toEqual(['writer']);
    expect(runnableTogether(workers, [], ['request'])).toEqual([]);
  });
});
