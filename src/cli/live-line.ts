/**
 * One line at the bottom of a terminal that is redrawn in place (`\r` and "erase line"), for
 * what grows while a model writes. Only for a terminal: a log would get every redraw. Text
 * is made safe and cut by the caller (progress.ts); a line printed meanwhile clears it first.
 *
 * @example
 * const live = new LiveLine(process.stdout);
 * live.show('worker echo → note (120 characters): …the end of the draft');
 * live.clear(); // before printing a normal line
 */
const ERASE_LINE = '\r\x1b[2K';

export class LiveLine {
  private shown = false;

  constructor(private readonly out: { write(text: string): unknown; columns?: number }) {}

  /** How many characters fit on the line. */
  get width(): number {
    return Math.max(20, (this.out.columns ?? 80) - 1);
  }

  show(text: string): void {
    this.out.write(`${ERASE_LINE}${text.slice(0, this.width)}`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.out.write(ERASE_LINE);
    this.shown = false;
  }
}
