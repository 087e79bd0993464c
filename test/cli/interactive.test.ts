/**
 * `steward run` on a terminal: a real pseudo-terminal (util-linux `script`), keystrokes in,
 * the screen out. The story: request → approve a step → reject the artifact, saying once what
 * should change (sent as the revision) → accept the revised artifact, which quotes it → quit at
 * the next step; the session is saved where it stopped.
 */
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SqliteStore } from '../../src/index.js';
import { buildPage } from '../inspect/page-build.js';
import { runCli } from '../support/cli-process.js';
import { DOWN, ENTER, hasScript, terminal, REQUEST_PROMPT } from '../support/terminal.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-tty-');

it.skipIf(!hasScript)(
  'drives a session by keystrokes on a real terminal and quits with the session saved',
  async () => {
    const db = tmp.path('tty.db');
    const tty = terminal('run --package tiny', db);
    const { waitFor, type } = tty;
    try {
      await waitFor(REQUEST_PROMPT, 'the request prompt');
      await type(`A note about green tea${ENTER}`);
      await waitFor(/Approve the step/, 'the approve choice');
      await type(ENTER);
      await waitFor(/Accept the artifact/, 'the review choice for a1');
      await type(`${DOWN}${ENTER}`); // Reject the artifact
      await waitFor(/What should change in a1\? \(the worker revises it\)/, 'the one question of a rejection');
      await type(`Two lines at most${ENTER}`);
      await waitFor(/What should change: Two lines at most/, 'the revision sent without asking again');
      await waitFor(/Accept the artifact/, 'the review choice for a2');
      await type(ENTER);
      await waitFor(/Approve the step/, 'the next step');
      await type(`${DOWN}${DOWN}${DOWN}${ENTER}`); // Quit for now (after Reject and "Edit, then approve")
      await waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }

    expect(tty.screen).toContain('demo model (no LLM)');
    expect(tty.screen).not.toContain('Why?');
    const store = new SqliteStore(db);
    try {
      const [summary] = (await store.list()).sessions;
      expect(summary).toMatchObject({ packageId: 'tiny', state: 'waiting_user.approve_step' });
      const journal = await store.journal(summary!.id);
      const userEvents = journal.filter((e) => e.kind === 'event').map((e) => e.type);
      expect(userEvents).toEqual([
        'user_submitted_input',
        'user_approved_next_step',
        'user_rejected_artifact',
        'user_submitted_input',
        'user_accepted_artifact',
      ]);
      const rejected = journal.find((e) => e.type === 'user_rejected_artifact')!;
      expect(rejected.payload).toMatchObject({ artifactId: 'a1' });
      expect(journal.filter((e) => e.type === 'user_submitted_input').map((e) => e.payload)).toMatchObject([{}, { text: 'Two lines at most' }]);
      const revised = (await store.load(summary!.id))!;
      expect(JSON.stringify(revised.snapshot)).toContain('Revised after your notes: Two lines at most');
    } finally {
      await store.close();
    }
  },
  90_000,
);

it.skipIf(!hasScript)(
  'Ctrl-C at a prompt leaves the session resumable and says how',
  async () => {
    const db = tmp.path('ctrl-c.db');
    const first = terminal('run --package tiny', db);
    try {
      await first.waitFor(REQUEST_PROMPT, 'the request prompt');
      await first.type(`A note about green tea${ENTER}`);
      await first.waitFor(/Approve the step/, 'the approve choice');
      await first.type('\x03');
      await first.waitFor(/steward run --session (s_\w+)/, 'the resume command');
      expect(await first.exited).toBe(0);
    } finally {
      first.kill();
    }
    const id = /steward run --session (s_\w+)/.exec(first.screen)![1]!;
    const again = terminal(`run --session ${id}`, db);
    try {
      await again.waitFor(/Approve the step/, 'the same step, after resuming');
      await again.type(`${DOWN}${DOWN}${DOWN}${ENTER}`); // Quit for now
      await again.waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await again.exited).toBe(0);
    } finally {
      again.kill();
    }
  },
  90_000,
);

it.skipIf(!hasScript)(
  'a prompt made stale by another process is not sent: the terminal shows what changed and offers what the session takes now',
  async () => {
    const db = tmp.path('stale.db');
    const tty = terminal('run --package tiny', db);
    try {
      await tty.waitFor(REQUEST_PROMPT, 'the request prompt');
      await tty.type(`A note about green tea${ENTER}`);
      await tty.waitFor(/Approve the step/, 'the approve choice');
      const id = /Session (s_\w+)/.exec(tty.screen)![1]!;
      // Someone else approves the step while the menu is open (another terminal, a script).
      const other = await runCli(['send', id, 'approve'], { db });
      expect(other.code, other.stderr).toBe(0);
      await tty.type(ENTER); // "Approve the step", from the stale menu
      await tty.waitFor(/changed while you were choosing/, 'the notice that the session moved on');
      await tty.waitFor(/Accept the artifact/, 'the review menu for a1');
      const afterNotice = tty.screen.slice(tty.screen.lastIndexOf('changed while you were choosing'));
      expect(afterNotice).not.toMatch(/Proposed step/);
      expect(afterNotice).toMatch(/Artifact a1/);
      await tty.type(`${DOWN}${DOWN}${ENTER}`); // Quit for now
      await tty.waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }
    expect(tty.screen).not.toMatch(/not accepted/);
    const store = new SqliteStore(db, { readOnly: true });
    try {
      const [summary] = (await store.list()).sessions;
      expect(summary!.state).toBe('waiting_user.review_artifact');
      const approvals = (await store.journal(summary!.id)).filter((e) => e.type === 'user_approved_next_step');
      expect(approvals).toHaveLength(1);
    } finally {
      await store.close();
    }
  },
  90_000,
);

it.skipIf(!hasScript)(
  'the done hint is a command that works when pasted: --db only when the store is not the default',
  async () => {
    const db = tmp.path('done.db');
    const tty = terminal('run --package tiny', db);
    try {
      await tty.waitFor(REQUEST_PROMPT, 'the request prompt');
      await tty.type(`A note${ENTER}`);
      for (let i = 0; i < 2; i++) {
        await tty.waitFor(/Approve the step/, 'the approve choice');
        await tty.type(ENTER);
        await tty.waitFor(/Accept the artifact/, 'the review choice');
        await tty.type(ENTER);
      }
      await tty.waitFor(/Done\. See it again with/, 'the done hint');
      await tty.waitFor(/\n/, 'the end of the hint');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }
    const id = /Session (s_\w+)/.exec(tty.screen)![1]!;
    expect(tty.screen).toContain(`steward show ${id} --db ${db}`);
    expect(tty.screen).toContain(`steward log ${id} --db ${db}`);
  },
  90_000,
);

it.skipIf(!hasScript)(
  'with --inspect local, approving in the inspector page makes the terminal show the new state, not a refusal and the old card',
  async () => {
    const db = tmp.path('inspect-stale.db');
    await buildPage(); // the page the CLI serves (test/support/cli-build.ts)
    const tty = terminal('run --package tiny --inspect local', db);
    try {
      await tty.waitFor(REQUEST_PROMPT, 'the request prompt');
      await tty.type(`A note about green tea${ENTER}`);
      await tty.waitFor(/Approve the step/, 'the approve choice');
      const url = new URL(/Inspector: (http:\/\/127\.0\.0\.1:\d+\/\?token=\w+)/.exec(tty.screen)![1]!);
      const id = /Session (s_\w+)/.exec(tty.screen)![1]!;
      const token = url.searchParams.get('token')!;
      const response = await fetch(new URL(`/api/sessions/${id}/events`, url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-steward-token': token },
        body: JSON.stringify({ type: 'user_approved_next_step' }),
      });
      expect(response.status).toBe(200);
      await tty.type(ENTER); // "Approve the step", from the menu drawn before the page approved it
      await tty.waitFor(/changed while you were choosing/, 'the notice that the session moved on');
      await tty.waitFor(/Accept the artifact/, 'the review menu for a1');
      const afterNotice = tty.screen.slice(tty.screen.lastIndexOf('changed while you were choosing'));
      expect(afterNotice).not.toMatch(/Proposed step/);
      await tty.type(`${DOWN}${DOWN}${ENTER}`); // Quit for now
      await tty.waitFor(/Saved\. Continue with/, 'the goodbye');
    } finally {
      tty.kill();
    }
    expect(tty.screen).not.toMatch(/not accepted/);
  },
  90_000,
);

it.skipIf(!hasScript)(
  '"Edit, then approve" edits the reason; "Edit, then accept" opens $EDITOR on the body; --as fills `by`',
  async () => {
    const db = tmp.path('edit.db');
    const editor = tmp.path('editor.sh');
    // A small editor: replaces the file it is given with a fixed body.
    writeFileSync(editor, '#!/bin/sh\nprintf "Edited in the editor.\\n" > "$1"\n', { mode: 0o755 });
    const tty = terminal('run --package tiny --as tester', db, { EDITOR: editor });
    try {
      await tty.waitFor(REQUEST_PROMPT, 'the request prompt');
      await tty.type(`A note about green tea${ENTER}`);
      // The menu's own line: the step's box above it names "Edit, then approve" too, before the menu takes keys.
      await tty.waitFor(/○ Edit, then approve/, 'the edit choice');
      await tty.type(`${DOWN}${DOWN}${ENTER}`); // Edit, then approve (after Approve, Reject)
      await tty.waitFor(/The worker's task/, 'the reason prompt');
      await tty.type(` Keep it short.${ENTER}`);
      await tty.waitFor(/○ Edit, then accept/, 'the review menu with the edit choice');
      await tty.type(`${DOWN}${DOWN}${ENTER}`); // Edit, then accept
      await tty.waitFor(/Approve the step/, 'the next step');
      await tty.type(`${DOWN}${DOWN}${DOWN}${ENTER}`); // Quit for now
      await tty.waitFor(/Saved\. Continue with/, 'the goodbye');
      expect(await tty.exited).toBe(0);
    } finally {
      tty.kill();
    }
    const store = new SqliteStore(db, { readOnly: true });
    try {
      const [summary] = (await store.list()).sessions;
      const journal = await store.journal(summary!.id);
      const approved = journal.find((e) => e.type === 'user_approved_next_step')!.payload as { by?: string; edits?: { reason?: string } };
      expect(approved.by).toBe('tester');
      expect(approved.edits?.reason).toMatch(/ Keep it short\.$/);
      const accepted = journal.find((e) => e.type === 'user_accepted_artifact')!.payload as { by?: string; edits?: Record<string, string> };
      expect(accepted).toMatchObject({ by: 'tester', edits: { note: 'Edited in the editor.\n' } });
      const stored = (await store.load(summary!.id))!.snapshot as {
        snapshot: { context: { blackboard: Record<string, { writtenBy: string; body: string }[]> } };
      };
      // The snapshot keeps the latest version; the worker's, no longer under review, is in the archive.
      expect(stored.snapshot.context.blackboard.note!.at(-1)!.writtenBy).toBe('tester');
      expect((await store.archived(summary!.id, 'version', 'note')).map((i) => (i.value as { writtenBy: string }).writtenBy)).toEqual(['echo', 'tester']);
    } finally {
      await store.close();
    }
  },
  90_000,
);
