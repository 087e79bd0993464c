/**
 * The draft of one worker round: the `submit` its model is writing, turned into
 * `artifact_delta` events per tag as the arguments stream in (streamed-json.ts reads
 * them), and closed by what the chart then says about the call:
 * - published: the remainder of each tag's body, if the stream did not bring all of it (a
 *   model that does not stream, a worker's JSON reply, a listener that came late), so the
 *   deltas of a tag always join to exactly the body written; a draft that is not a prefix
 *   of the published bodies (a repeated key, a second submit) is discarded (`replaced`) and
 *   the whole bodies follow;
 * - refused by a rule, or the round failed or stopped: `artifact_draft_discarded`.
 * One draft per round, owned by the session's event hub; nothing here is shared.
 */
import { DEFAULT_LIMITS } from '../core/limits.js';
import type { ToolCallDelta } from '../core/models/model.js';
import type { StreamEventOf } from '../core/machines/stream-events.js';
import { StreamedJsonReader } from './streamed-json.js';

type Unstamped<T> = Omit<T, 'sessionId' | 'at'>;
export type DraftEvent = Unstamped<StreamEventOf<'artifact_delta'>> | Unstamped<StreamEventOf<'artifact_draft_discarded'>>;

const SUBMIT = 'submit';
/** Calls of one reply whose names the draft remembers (a reply has a few). */
const MAX_CALLS = 64;

export class ArtifactDraft {
  /** Each tag's text sent so far, in the order the tags came. */
  private readonly sent = new Map<string, string>();
  private readonly names = new Map<number, string>();
  /** The call the draft reads: the reply's first `submit`. */
  private call: { index: number; id?: string; reader: StreamedJsonReader; chars: number } | null = null;

  constructor(
    readonly round: number,
    readonly worker: string,
    private readonly emit: (event: DraftEvent) => void,
  ) {}

  /** A piece of a tool call of this round's reply. */
  toolCallDelta(piece: ToolCallDelta): void {
    if (piece.name && (this.names.size < MAX_CALLS || this.names.has(piece.index))) this.names.set(piece.index, piece.name);
    if (!this.call) {
      if (this.names.get(piece.index) !== SUBMIT) return;
      this.call = { index: piece.index, ...(piece.id ? { id: piece.id } : {}), reader: new StreamedJsonReader(this.onPiece), chars: 0 };
    }
    if (piece.index !== this.call.index || !piece.arguments) return;
    // Arguments past the limit are refused anyway (toolArgumentsChars): stop reading them.
    this.call.chars += piece.arguments.length;
    if (this.call.chars <= DEFAULT_LIMITS.toolArgumentsChars) this.call.reader.write(piece.arguments);
  }

  private readonly onPiece = (outer: string, tag: string, text: string): void => {
    if (outer !== 'outputs') return;
    this.sent.set(tag, (this.sent.get(tag) ?? '') + text);
    this.emit({ type: 'artifact_delta', round: this.round, worker: this.worker, tag, delta: text });
  };

  /** The chart refused a worker call: the draft goes when it was the submit being read (or, without ids, any submit). */
  refused(callId: string, tool: string, rule: string | undefined): void {
    if (!this.call) return;
    if (this.call.id !== undefined ? this.call.id !== callId : tool !== SUBMIT) return;
    this.discard('refused', rule);
  }

  /** The round ended without a reply: its draft goes. */
  ended(outcome: 'failed' | 'stopped'): void {
    if (this.call || this.sent.size > 0) this.discard(outcome);
  }

  /**
   * The artifact was published with these bodies: each tag's remainder is sent, or — when
   * what was sent is not the start of the bodies — the draft is replaced by the whole bodies.
   */
  published(bodies: ReadonlyMap<string, string>): void {
    const fits = [...this.sent].every(([tag, text]) => bodies.get(tag)?.startsWith(text) === true);
    if (!fits) this.discard('replaced');
    for (const [tag, body] of bodies) {
      const rest = body.slice(this.sent.get(tag)?.length ?? 0);
      if (rest) this.emit({ type: 'artifact_delta', round: this.round, worker: this.worker, tag, delta: rest });
    }
    this.sent.clear();
    this.call = null;
  }

  private discard(reason: StreamEventOf<'artifact_draft_discarded'>['reason'], rule?: string): void {
    this.sent.clear();
    this.call = null;
    this.emit({ type: 'artifact_draft_discarded', round: this.round, worker: this.worker, reason, ...(rule !== undefined ? { rule } : {}) });
  }
}
