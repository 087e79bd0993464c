/**
 * `steward run` on a terminal deciding a fan-out: the manager proposes three independent
 * workers at once (a fake OpenAI server answers the trio package); each proposed step is asked
 * about in turn (approve, reject with a reason, edit then approve), then each artifact of the
 * fan-in (reject with a reason the manager reads, edit in $EDITOR then accept).
 */
import { writeFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { SqliteStore } from '../../src/index.js';
import { DOWN, ENTER, hasScript, REQUEST_PROMPT, terminal } from '../support/terminal.js';
import { useTempDir } from '../support/temp.js';
import { trioPackage } from '../support/trio-package.js';
import { proposeTrio, startTrioServer, type TrioServer } from '../support/trio-openai.js';

const tmp = useTempDir('steward-tty-fan-out-');

let trio: TrioServer | undefined;
afterEach(async () => {
  await trio?.server.close();
  trio = undefined;
});

it.skipIf(!hasScript)(
  'asks about each proposed step, then each artifact under review, one at a time',
  async () => {
    trio = await startTrioServer([proposeTrio(true)]);
    const db = tmp.path('tty.db');
    const editor = tmp.path('editor.sh');
    writeFileSync(editor, '#!/bin/sh\nprintf "East, as edited.\\n" > "$1"\n', { mode: 0o755 });
    const packages = trioPackage(tmp.path('pkgs'));
    const tty = terminal(`run --packages ${JSON.stringify(packages)} --package trio`, db, { ...trio.env, EDITOR: editor });
    try {
      await tty.waitFor(REQUEST_PROMPT, 'the request prompt');
      await tty.type(`Notes from three sides${ENTER}`);
      await tty.waitFor(/Proposed step 3 of 3 · run_east/, 'the three proposed steps shown');
      await tty.waitFor(/Step run_north: run north \(1 of 3 waiting\)/, 'the first item');
      await tty.type(ENTER); // Approve north
      await tty.waitFor(/Step run_south: run south \(1 of 2 waiting\)/, 'the second item');
      await tty.type(`${DOWN}${DOWN}${ENTER}`); // Reject south
      await tty.waitFor(/Why\? \(the manager is told\)/, 'the reason prompt');
      await tty.type(`Not the south${ENTER}`);
      await tty.waitFor(/Step run_east: run east ·/, 'the last item');
      await tty.type(`${DOWN}${ENTER}`); // Edit, then approve
      await tty.waitFor(/The worker's task \(east\)/, 'the reason of east, to edit');
      await tty.type(` Briefly.${ENTER}`);
      await tty.waitFor(/Artifact 2 of 2 · \w+ by east/, 'both artifacts shown');
      await tty.waitFor(/Artifact \w+ by north \(1 of 2 under review\)/, "north's artifact first, as proposed");
      await tty.type(`${DOWN}${DOWN}${ENTER}`); // Reject (after Accept, Edit then accept)
      await tty.waitFor(/Why reject \w+\? \(the manager reads it\)/, 'the reason prompt');
      await tty.type(`Too plain${ENTER}`);
      await tty.waitFor(/Artifact \w+ by east/, "east's artifact");
      await tty.type(`${DOWN}${ENTER}`); // Edit, then accept
      await tty.waitFor(/Done\. See it again/, 'the end');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }

    expect(Object.fromEntries(trio.calls)).toEqual({ manager: 2, north: 1, east: 1 });
    const store = new SqliteStore(db);
    try {
      const [summary] = (await store.list()).sessions;
      expect(summary).toMatchObject({ packageId: 'trio', state: 'done' });
      const journal = await store.journal(summary!.id);
      const decisions = journal.filter((e) => e.kind === 'event' && e.type !== 'user_submitted_input').map((e) => e.payload);
      const artifacts = (
        JSON.parse(JSON.stringify((await store.load(summary!.id))!.snapshot)) as {
          snapshot: { context: { artifacts: { id: string; workerId: string; status: string }[] } };
        }
      ).snapshot.context.artifacts;
      const idOf = (worker: string) => artifacts.find((a) => a.workerId === worker)!.id;
      expect(decisions).toMatchObject([
        { type: 'user_approved_next_step', item: 'run_north' },
        { type: 'user_rejected_next_step', item: 'run_south', reason: 'Not the south' },
        { type: 'user_approved_next_step', item: 'run_east', edits: { reason: 'Write the east note. Briefly.' } },
        { type: 'user_rejected_artifact', artifactId: idOf('north'), reason: 'Too plain' },
        { type: 'user_accepted_artifact', artifactId: idOf('east'), edits: { east: 'East, as edited.\n' } },
      ]);
      expect(Object.fromEntries(artifacts.map((a) => [a.workerId, a.status]))).toEqual({ north: 'rejected', east: 'accepted' });
    } finally {
      await store.close();
    }
  },
  120_000,
);
