/**
 * Who decides a worker's waits and when they end, as a package and a deployment write it:
 * front matter `approvers`, `reviewers`, `deadlines` (the decisions about that worker only),
 * the manifest's `deadlines`, `createRuntime({ deadlines })`; each refused with a message
 * that names the field and the fix, and carried into the package info only when set.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PackageError, UserError } from '../../src/core/errors.js';
import { waitTerms } from '../../src/core/machines/deadlines.js';
import type { SessionContext } from '../../src/core/machines/session.context.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { packageInfoOf } from '../../src/runtime/journal-replay.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { withDeploymentDeadlines } from '../../src/runtime/deployment-deadlines.js';
import { loadPackage } from '../../src/skills/index.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-deciders-');
let packages = 0;

const echo = { id: 'echo', title: 'Echo', description: 'Restates the request.', inputTags: ['request'], outputTags: ['note'] };

/** A one-worker package `tiny` in a folder of its own (front matter as JSON, which is YAML); its packages folder. */
function writePackage(frontMatter: Record<string, unknown> = {}, manifest: Record<string, unknown> = {}): string {
  const root = temp.path(`p${++packages}`);
  const write = (path: string, text: string) => {
    const file = join(root, 'tiny', path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  write('manifest.json', JSON.stringify({ schemaVersion: 1, id: 'tiny', title: 'Tiny', description: 'One worker.', workers: ['echo'], ...manifest }));
  const lines = Object.entries({ ...echo, ...frontMatter }).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  write('workers/echo.md', `---\n${lines.join('\n')}\n---\nRestate the request. Finish by calling \`submit\`.\n`);
  return root;
}

function refusal(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(PackageError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected the package to be refused');
}

describe('the package format', () => {
  it('reads approvers, reviewers and deadlines from front matter and the manifest, and puts them into the package info', () => {
    const root = writePackage(
      {
        approvers: ['ops', 'ops', 'leads'],
        reviewers: ['editors'],
        deadlines: { approve_step: { after: '24h', outcome: 'escalate', to: 'leads', then: { after: '4h' } } },
      },
      { deadlines: { review_artifact: { after: '2d', outcome: 'reject' }, intake: { after: '1h', outcome: 'remind' } } },
    );
    const pkg = loadPackage(join(root, 'tiny'));
    expect(pkg.workers[0]).toMatchObject({
      approvers: ['ops', 'leads'],
      reviewers: ['editors'],
      deadlines: { approve_step: { after: '24h', outcome: 'escalate', to: 'leads', then: { after: '4h', outcome: 'reject' } } },
    });
    const info = packageInfoOf(pkg);
    expect(info.workers[0]).toMatchObject({ approvers: ['ops', 'leads'], reviewers: ['editors'] });
    expect(info.deadlines).toEqual({ review_artifact: { after: '2d', outcome: 'reject' }, intake: { after: '1h', outcome: 'remind' } });
  });

  it('leaves the package info as it was when a package names none of them', () => {
    const pkg = loadPackage(join(writePackage(), 'tiny'));
    expect(Object.keys(pkg.workers[0]!)).not.toContain('approvers');
    // Byte for byte the info an older Steward built: the journals' and snapshots' packages compare equal.
    expect(JSON.stringify(packageInfoOf(pkg, 'sha256:x'))).toBe(
      '{"id":"tiny","title":"Tiny","description":"One worker.","workers":[{"id":"echo","title":"Echo","description":"Restates the request.",' +
        '"inputTags":["request"],"outputTags":["note"],"roles":[]}],"version":"sha256:x"}',
    );
  });

  it('refuses a front matter list of deciders that is not a list of group names', () => {
    expect(refusal(() => loadPackage(join(writePackage({ approvers: 'ops' }), 'tiny')))).toMatch(
      /front matter field "approvers" must be a list of the groups who approve its steps and tool calls, e\.g\. \["ops"\]/,
    );
    expect(refusal(() => loadPackage(join(writePackage({ reviewers: [] }), 'tiny')))).toMatch(/front matter field "reviewers" must name at least one group/);
    expect(refusal(() => loadPackage(join(writePackage({ approvers: ['two words'] }), 'tiny')))).toMatch(
      /front matter field "approvers\[0\]" must have no control or invisible characters, no spaces and no comma/,
    );
  });

  it("refuses a worker's deadline for a wait that is not a decision about it, naming the manifest as the place", () => {
    const message = refusal(() => loadPackage(join(writePackage({ deadlines: { intake: { after: '1h', outcome: 'remind' } } }), 'tiny')));
    expect(message).toMatch(/front matter field "deadlines" names "intake": a worker's deadlines are for the decisions about it/);
    expect(message).toContain('approve_step, review_artifact, approve_tool');
    expect(message).toContain('the manifest\'s "deadlines"');
  });

  it('refuses a malformed rule in front matter and in the manifest, naming the field', () => {
    expect(refusal(() => loadPackage(join(writePackage({ deadlines: { approve_step: { after: 'a day' } } }), 'tiny')))).toMatch(
      /front matter field "deadlines\.approve_step\.after" must be a whole number and a unit, like "90s"/,
    );
    expect(refusal(() => loadPackage(join(writePackage({ deadlines: { approve_step: { after: '1h', outcome: 'escalate' } } }), 'tiny')))).toMatch(
      /front matter field "deadlines\.approve_step" an "escalate" rule names the group/,
    );
    expect(refusal(() => loadPackage(join(writePackage({}, { deadlines: { intake: { after: '1h', outcome: 'reject' } } }), 'tiny')))).toMatch(
      /manifest field "deadlines\.intake" "intake" waits for no decision a deadline can make: only "remind" applies there/,
    );
    expect(refusal(() => loadPackage(join(writePackage({}, { deadlines: { lunch: { after: '1h', outcome: 'remind' } } }), 'tiny')))).toMatch(
      /manifest field "deadlines" names a wait Steward does not have \(lunch\)/,
    );
    expect(refusal(() => loadPackage(join(writePackage({ deadlines: { review_artifact: { after: '1h', outcom: 'reject' } } }), 'tiny')))).toMatch(
      /front matter field "deadlines\.review_artifact" has unknown field "outcom": a rule has after, outcome, to and then/,
    );
    expect(refusal(() => loadPackage(join(writePackage({}, { deadlines: { approve_step: '24h' } }), 'tiny')))).toMatch(
      /manifest field "deadlines\.approve_step" must be a rule like \{ "after": "24h", "outcome": "reject" \}/,
    );
    expect(refusal(() => loadPackage(join(writePackage({}, { deadlines: '24h' }), 'tiny')))).toMatch(
      /manifest field "deadlines" must be an object of waiting reasons → a rule like \{ "after": "24h", "outcome": "reject" \}/,
    );
  });
});

describe('createRuntime({ deadlines })', () => {
  it('refuses a malformed policy, naming the option', () => {
    const create = (deadlines: unknown) => () => createRuntime({ model: new DemoModel(), deadlines: deadlines as never });
    expect(create({ approve_step: { after: '25 hours' } })).toThrow(UserError);
    expect(create({ approve_step: { after: '25 hours' } })).toThrow(/createRuntime: deadlines\.approve_step\.after must be a whole number and a unit/);
    expect(create({ input: { after: '1h', outcome: 'reject' } })).toThrow(/createRuntime: deadlines\.input "input" waits for no decision/);
    expect(create([])).toThrow(/createRuntime: deadlines must be an object of waiting reasons/);
  });

  it("puts the deployment's deadlines over the manifest's, reason by reason; a worker's own still win for its waits", () => {
    const root = writePackage(
      { deadlines: { review_artifact: { after: '30m', outcome: 'reject' } } },
      { deadlines: { approve_step: { after: '7d', outcome: 'reject' }, intake: { after: '1h', outcome: 'remind' } } },
    );
    const info = packageInfoOf(loadPackage(join(root, 'tiny')));
    expect(withDeploymentDeadlines(info, undefined)).toBe(info);
    const deployed = withDeploymentDeadlines(info, { approve_step: { after: '24h', outcome: 'reject' }, review_artifact: { after: '2d', outcome: 'reject' } });
    expect(deployed.deadlines).toEqual({
      approve_step: { after: '24h', outcome: 'reject' },
      intake: { after: '1h', outcome: 'remind' },
      review_artifact: { after: '2d', outcome: 'reject' },
    });
    // The chart's reading: the worker's front matter first, then the package's (deployment over manifest).
    const context = { package: deployed, step: { workerId: 'echo' } } as unknown as SessionContext;
    expect(waitTerms(context, 'review_artifact').deadline).toMatchObject({ after: '30m' });
    expect(waitTerms(context, 'approve_step').deadline).toMatchObject({ after: '24h' });
  });

  it("gives a new session the deployment's deadlines with its package", async () => {
    const root = writePackage({}, { deadlines: { approve_step: { after: '7d', outcome: 'reject' } } });
    const runtime = createRuntime({ model: new DemoModel(), packagesDir: root, deadlines: { approve_step: { after: '1h', outcome: 'reject' } } });
    const session = await runtime.createSession({ packageId: 'tiny' });
    expect(session.actorRef.getSnapshot().context.package?.deadlines).toEqual({ approve_step: { after: '1h', outcome: 'reject' } });
    session.stop();
    const plain = await createRuntime({ model: new DemoModel(), packagesDir: root }).createSession({ packageId: 'tiny' });
    expect(plain.actorRef.getSnapshot().context.package?.deadlines).toEqual({ approve_step: { after: '7d', outcome: 'reject' } });
    plain.stop();
  });
});
