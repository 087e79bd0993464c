/**
 * Makes the persisted-session fixture of the current snapshot schema version
 * (test/fixtures/snapshots/v<N>.json): a session of the bundled `tiny` package waiting in
 * review_artifact, with a refused event in its log, a worker's questions riding along and
 * every part of the context filled in. Write it with
 *
 *   node --import tsx test/support/snapshot-fixture.ts
 *
 * and commit it when the schema version is bumped (keep the older files: each must still load).
 * It also writes v<N>-running.json, a session saved with its first model call in flight
 * (test/runtime/context-inputs.test.ts resumes it).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRuntime, type UserEvent } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../../src/runtime/persisted.js';

export const FIXTURE_SESSION_ID = 'fixture-session';

/** The script up to the fixture's point; the continuation is the test's. */
export const fixtureScript = () =>
  new ScriptedModel([
    {
      agent: 'manager',
      toolCalls: [
        scriptedCall('read_blackboard', { tags: ['request'] }),
        scriptedCall('ask_user', { message: 'A lighthouse ghost: shall I start?', questions: ['Which coast?'] }),
      ],
    },
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: false })] },
    {
      agent: 'worker',
      toolCalls: [scriptedCall('submit', { outputs: { note: 'A ghost haunts a lighthouse.' } }), scriptedCall('ask_user', { questions: ['Longer?'] })],
    },
  ]);

/** Plays the script and returns `session.persisted()` at review_artifact. */
export async function makeFixtureSession(): Promise<unknown> {
  const runtime = createRuntime({ model: fixtureScript() });
  const session = await runtime.createSession({ packageId: 'tiny', id: FIXTURE_SESSION_ID });
  const steps = [
    { type: 'user_confirmed_intake' }, // refused: no request yet
    { type: 'user_submitted_input', text: 'A ghost story in a lighthouse.' },
    { type: 'user_answered_questions', answers: { q1: 'The Norwegian coast.' } },
  ] satisfies UserEvent[];
  for (const event of steps) await session.send(event);
  const view = session.view();
  if (view.state !== 'waiting_user.review_artifact') throw new Error(`The fixture script ended in ${view.state}, not review_artifact.`);
  const persisted = session.persisted();
  session.stop();
  return persisted;
}

/**
 * `session.persisted()` of a `tiny` session while its manager's first call is in flight (from
 * v10 its turn is saved marked `inputIsContext`, without its input): a resume makes the call again.
 */
export async function makeRunningFixture(): Promise<unknown> {
  let calling: () => void = () => {};
  const called = new Promise<void>((resolve) => (calling = resolve));
  const hangs = {
    label: 'hangs',
    complete: () => {
      calling();
      return new Promise<never>(() => {});
    },
  };
  const session = await createRuntime({ model: hangs }).createSession({ packageId: 'tiny', id: FIXTURE_SESSION_ID });
  void session.send({ type: 'user_submitted_input', text: RUNNING_FIXTURE_REQUEST });
  await called;
  const persisted = session.persisted();
  session.stop();
  return persisted;
}

export const RUNNING_FIXTURE_REQUEST = 'A ghost story in a lighthouse.';

export const fixturePath = (version: number) => fileURLToPath(new URL(`../fixtures/snapshots/v${version}.json`, import.meta.url));
export const runningFixturePath = (version: number) => fileURLToPath(new URL(`../fixtures/snapshots/v${version}-running.json`, import.meta.url));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const path = fixturePath(SNAPSHOT_SCHEMA_VERSION);
  writeFileSync(path, `${JSON.stringify(await makeFixtureSession(), null, 2)}\n`);
  console.log(`wrote ${path}`);
  const running = runningFixturePath(SNAPSHOT_SCHEMA_VERSION);
  writeFileSync(running, `${JSON.stringify(await makeRunningFixture(), null, 2)}\n`);
  console.log(`wrote ${running}`);
}
