// A plain Node app on Steward's runtime: one session of the bundled `tiny` package with the
// offline demo model, in memory. Every time the session waits, the app picks the event a
// person would (confirm, approve, accept) from what the machine enables now.
import { createRuntime, MemoryStore } from 'steward';
import { DemoModel } from 'steward/testing';

const runtime = createRuntime({ model: new DemoModel(), store: new MemoryStore() });
const session = await runtime.createSession({ packageId: 'tiny' });
let { view } = await session.send({ type: 'user_submitted_input', text: 'A short note about otters.' });

const pick = {
  user_confirmed_intake: () => ({ type: 'user_confirmed_intake' }),
  user_approved_next_step: () => ({ type: 'user_approved_next_step' }),
  user_accepted_artifact: (v) => ({ type: 'user_accepted_artifact', artifactId: v.artifact.id }),
  user_skipped_questions: () => ({ type: 'user_skipped_questions' }),
};

for (let steps = 0; view.phase !== 'done' && steps < 20; steps++) {
  const type = session.enabledEvents().find((t) => t in pick);
  if (!type) throw new Error(`Nothing to do in ${view.state}: ${session.enabledEvents().join(', ')}`);
  console.log(`${view.state.padEnd(32)} → ${type}`);
  const result = await session.send(pick[type](view));
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  view = result.view;
}

const accepted = view.artifacts.filter((a) => a.status === 'accepted').length;
console.log(`${view.state}: ${accepted} artifacts accepted, ${view.rounds} model rounds`);
for (const { tag, version, writtenBy } of view.blackboard) console.log(`  #${tag} v${version} by ${writtenBy}`);
