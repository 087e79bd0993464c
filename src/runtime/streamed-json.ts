/**
 * Reads a JSON object while its text is still arriving (a tool call's arguments as a model
 * streams them) and passes on, piece by piece, the string values two levels down: for
 * `{"outputs": {"note": "Tea\nfor two"}}` it reports ("outputs", "note", "Tea\nfor two") in
 * as many pieces as the text came in, already decoded. Escapes are decoded across chunk
 * boundaries (`\`, `u00`, `e9"` gives "é"), and a surrogate pair is never split between two
 * pieces, so every piece is text a page can show as it is.
 *
 * One pass over each character, constant work per character and no re-parsing: a 100 kB
 * body in 10-character chunks costs what parsing it once costs. Purpose-built (see
 * docs/design.md, "Live events"): a partial-JSON parser re-parses the whole text so far at
 * each chunk. It does not validate: for valid JSON its pieces join to what `JSON.parse`
 * gives (the first value of a repeated key; `JSON.parse` keeps the last), and on text that
 * cannot be JSON it stops reporting (`broken`); the caller's real parse has the last word.
 *
 * @example
 * const pieces: string[] = [];
 * const reader = new StreamedJsonReader((outer, inner, text) => pieces.push(`${outer}.${inner}: ${text}`));
 * for (const chunk of ['{"outputs": {"note": "Te', 'a\\u00', 'e9"}}']) reader.write(chunk);
 * // pieces: ['outputs.note: Te', 'outputs.note: aé']
 */

/** Called with the next decoded piece of the string value at `outer` → `inner`. */
export type StringPieceListener = (outer: string, inner: string, text: string) => void;

const enum Mode {
  Between,
  String,
  Escape,
  Unicode,
}

/** An object or array open at depth 1 or 2 (deeper ones are only counted). */
interface Level {
  object: boolean;
  /** In an object: the next string is a key (after `{` or `,`). */
  expectKey: boolean;
  /** The last key read in this object (its value is being read, or was). */
  key: string | null;
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

export class StreamedJsonReader {
  private readonly levels: Level[] = [];
  private depth = 0;
  private mode = Mode.Between;
  private started = false;
  private stopped = false;
  /** The string being read is a key (decoded into `key`) or a reported value (decoded into `pending`). */
  private stringIsKey = false;
  private current: { outer: string; inner: string } | null = null;
  private key = '';
  private pending = '';
  private hex = '';
  /** `outer\u0000inner` pairs reported already: only a key's first value is reported. */
  private readonly seen = new Set<string>();

  constructor(private readonly onString: StringPieceListener) {}

  /** True once the text can no longer be JSON: nothing more is reported. */
  get broken(): boolean {
    return this.stopped;
  }

  write(chunk: string): void {
    if (this.stopped) return;
    const n = chunk.length;
    let i = 0;
    while (i < n && !this.stopped) {
      if (this.mode === Mode.String) {
        const start = i;
        while (i < n) {
          const c = chunk.charCodeAt(i);
          if (c === 0x22 || c === 0x5c) break;
          i++;
        }
        if (i > start) this.append(chunk.slice(start, i));
        if (i === n) break;
        if (chunk.charCodeAt(i) === 0x22) this.endString();
        else this.mode = Mode.Escape;
        i++;
      } else if (this.mode === Mode.Escape) {
        this.escape(chunk[i]!);
        i++;
      } else if (this.mode === Mode.Unicode) {
        this.hexDigit(chunk[i]!);
        i++;
      } else {
        this.structure(chunk[i]!);
        i++;
      }
    }
    // A piece ends with the chunk; a high surrogate waits for its low half.
    if (this.current && this.pending) {
      const keep = isHighSurrogate(this.pending.charCodeAt(this.pending.length - 1)) ? 1 : 0;
      if (this.pending.length > keep) {
        this.onString(this.current.outer, this.current.inner, this.pending.slice(0, this.pending.length - keep));
        this.pending = this.pending.slice(this.pending.length - keep);
      }
    }
  }

  private append(text: string): void {
    if (this.stringIsKey) this.key += text;
    else if (this.current) this.pending += text;
  }

  private structure(c: string): void {
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') return;
    if (!this.started) {
      if (c !== '{') this.stopped = true;
      this.started = true;
    }
    const top = this.depth <= 2 ? this.levels[this.depth - 1] : undefined;
    switch (c) {
      case '{':
      case '[':
        this.depth++;
        if (this.depth <= 2) this.levels.push({ object: c === '{', expectKey: c === '{', key: null });
        return;
      case '}':
      case ']':
        if (this.depth <= 2) this.levels.pop();
        this.depth--;
        if (this.depth < 0) this.stopped = true;
        return;
      case ':':
        if (top?.object) top.expectKey = false;
        return;
      case ',':
        if (top?.object) top.expectKey = true;
        return;
      case '"':
        this.mode = Mode.String;
        this.stringIsKey = top?.object === true && top.expectKey;
        this.key = '';
        this.current = null;
        if (!this.stringIsKey && this.depth === 2) this.startValue();
        return;
      default:
        // A number, true, false or null: nothing to report. (Text after the object is not JSON; the real parse refuses it.)
        return;
    }
  }

  /** A string value at depth 2: reported when both levels are objects and the pair is new. */
  private startValue(): void {
    const [outer, inner] = this.levels;
    if (!outer?.object || !inner?.object || outer.key === null || inner.key === null) return;
    const pair = `${outer.key}\u0000${inner.key}`;
    if (this.seen.has(pair)) return;
    this.seen.add(pair);
    this.current = { outer: outer.key, inner: inner.key };
    this.pending = '';
  }

  private endString(): void {
    this.mode = Mode.Between;
    if (this.stringIsKey) {
      const top = this.levels[this.depth - 1];
      if (top) top.key = this.key;
      this.stringIsKey = false;
      return;
    }
    if (this.current && this.pending) this.onString(this.current.outer, this.current.inner, this.pending);
    this.current = null;
    this.pending = '';
  }

  private escape(c: string): void {
    if (c === 'u') {
      this.mode = Mode.Unicode;
      this.hex = '';
      return;
    }
    const decoded = ESCAPES[c];
    if (decoded === undefined || !Object.hasOwn(ESCAPES, c)) {
      this.stopped = true;
      return;
    }
    this.append(decoded);
    this.mode = Mode.String;
  }

  private hexDigit(c: string): void {
    if (!/^[0-9a-fA-F]$/.test(c)) {
      this.stopped = true;
      return;
    }
    this.hex += c;
    if (this.hex.length < 4) return;
    this.append(String.fromCharCode(Number.parseInt(this.hex, 16)));
    this.mode = Mode.String;
  }
}
