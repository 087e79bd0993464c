/**
 * A local server's stderr, line by line, each line bounded: a server may write megabytes
 * without a newline, and the log must hold none of it whole. The host hides secrets in each
 * line and makes it safe for a terminal before it logs it (tool-host.ts).
 */
import type { Stream } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/**
 * Calls `onLine` with each line of `stream`, cut at `maxChars` (the rest of a long line is
 * dropped, and the cut is said).
 *
 * @example
 * forwardLines(transport.stderr, { maxChars: 2000, onLine: (line) => log(`[files] ${line}`) });
 */
export function forwardLines(stream: Stream, options: { maxChars: number; onLine: (line: string) => void }): void {
  const decoder = new StringDecoder('utf8'); // a character split between two chunks stays whole
  let pending = '';
  let dropped = 0;
  const emit = () => {
    options.onLine(pending.replace(/\r$/, '') + (dropped > 0 ? ` … (${dropped} more characters cut)` : ''));
    pending = '';
    dropped = 0;
  };
  stream.on('data', (chunk: Buffer | string) => {
    const parts = (typeof chunk === 'string' ? chunk : decoder.write(chunk)).split('\n');
    parts.forEach((part, i) => {
      const room = Math.max(0, options.maxChars - pending.length);
      pending += part.slice(0, room);
      dropped += Math.max(0, part.length - room);
      if (i < parts.length - 1) emit();
    });
  });
  stream.on('end', () => {
    if (pending || dropped) emit();
  });
}
