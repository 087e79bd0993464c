/**
 * Opening a text in the user's editor ($VISUAL, else $EDITOR), as git does: the text goes
 * into a fresh private temporary file, the editor runs on the terminal, and what it saved
 * is read back. The editor's command line is split on spaces ("code --wait" works) and run
 * without a shell; the file name is made from the tag with only safe characters.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The editor command from the environment, or undefined when none is set. */
export function editorCommand(env: NodeJS.ProcessEnv): string | undefined {
  const command = (env.VISUAL ?? '').trim() || (env.EDITOR ?? '').trim();
  return command || undefined;
}

/** Edits `text` in `command`; resolves with the saved text, or undefined when the editor failed. */
export async function editInEditor(command: string, text: string, name: string): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-edit-'));
  const file = join(dir, `${name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60) || 'body'}.md`);
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const [program, ...args] = command.split(/\s+/);
    const result = spawnSync(program!, [...args, file], { stdio: 'inherit' });
    if (result.error || result.status !== 0) return undefined;
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
