/**
 * Group commit for SQLite: durable writes are committed without a flush (WAL,
 * `synchronous=NORMAL`), then wait for one `fsync` of the WAL file that covers them all,
 * run on libuv's thread pool. A synchronous FULL commit would fsync on the event loop —
 * every server request and model stream waits behind the disk then, once per write — and
 * concurrent sessions would each pay their own fsync.
 *
 * Why this is as durable as FULL: in WAL mode a commit appends its frames to the WAL file;
 * an fsync of that file (through any descriptor: it flushes the inode) makes them survive a
 * power loss. Frames a checkpoint has meanwhile copied into the database file are flushed by
 * the checkpoint itself (at NORMAL SQLite syncs the WAL before and the database after each
 * checkpoint). A write that arrives while an fsync runs waits for the next one, which starts
 * after its commit: it never resolves on an fsync that began before its frames were written.
 */
import { open, type FileHandle } from 'node:fs/promises';

export class WalFlush {
  private handle: Promise<FileHandle> | null = null;
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;
  /** Fsyncs completed: one per group of durable writes. */
  flushes = 0;

  constructor(private readonly walPath: string) {}

  /** Resolves once everything committed before this call is on disk. */
  flush(): Promise<void> {
    if (!this.running) return (this.running = this.run());
    // One is under way and may have started before the caller's commit: join the next.
    return (this.next ??= this.running
      .catch(() => {})
      .then(() => {
        this.next = null;
        return (this.running = this.run());
      }));
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.next, this.running]);
    const handle = await this.handle?.catch(() => null);
    this.handle = null;
    await handle?.close();
  }

  private async run(): Promise<void> {
    try {
      // The WAL file exists once the first write was committed (the caller's).
      const handle = await (this.handle ??= open(this.walPath, 'r+'));
      await handle.sync();
      this.flushes += 1;
    } catch (error) {
      this.handle = null;
      throw error;
    } finally {
      this.running = null;
    }
  }
}
