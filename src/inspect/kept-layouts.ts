/**
 * Laid-out charts the inspector keeps in a folder, one JSON file per key (the page's SHA-256 of
 * what it asked ELK: page/layout-key.ts), shared by every inspector given the same folder: the
 * `steward inspect` of each project on this machine, or the tests of one run. What a page sent
 * is data: the route checks it by the Placement schema before it is kept, and a file is checked
 * again when read; one that no longer reads is dropped. At most `maxFiles` are kept: the oldest go first.
 */
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Placement } from './placement.js';

/** A key as the page makes it: 64 lowercase hex digits (and so a safe file name). */
export const LAYOUT_KEY = /^[0-9a-f]{64}$/;

export class KeptLayouts {
  constructor(
    readonly dir: string,
    private readonly maxFiles = 200,
  ) {}

  private file(key: string): string {
    if (!LAYOUT_KEY.test(key)) throw new Error(`not a layout key: ${JSON.stringify(key.slice(0, 80))}`);
    return join(this.dir, `${key}.json`);
  }

  /** The placement kept under `key`, or null (none, or a file that no longer reads: removed). */
  async get(key: string): Promise<Placement | null> {
    const file = this.file(key);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return null;
    }
    try {
      return Placement.parse(JSON.parse(text));
    } catch {
      await rm(file, { force: true });
      return null;
    }
  }

  /** Keeps `placement` under `key` (written aside, then renamed: a reader never sees half of it); then drops the oldest beyond `maxFiles`. */
  async put(key: string, placement: Placement): Promise<void> {
    const file = this.file(key);
    await mkdir(this.dir, { recursive: true });
    const aside = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(aside, JSON.stringify(placement));
    await rename(aside, file);
    await this.prune();
  }

  private async prune(): Promise<void> {
    const names = (await readdir(this.dir)).filter((name) => name.endsWith('.json'));
    if (names.length <= this.maxFiles) return;
    const aged = await Promise.all(
      names.map(async (name) => ({
        name,
        at: await stat(join(this.dir, name)).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      })),
    );
    aged.sort((a, b) => a.at - b.at);
    await Promise.all(aged.slice(0, names.length - this.maxFiles).map(({ name }) => rm(join(this.dir, name), { force: true })));
  }
}
