/**
 * Plays a finished reply to a request's stream listeners the way a streaming model writes
 * it: the text in pieces, then each tool call (its id and name with the first piece of its
 * arguments, the rest of the arguments in pieces). The scripted and demo models use it, so
 * tests and the offline demo show drafts growing without a network.
 */
import type { ModelReply, ModelRequest } from '../core/models/model.js';

export interface PlayOptions {
  /** Characters per piece (at least 1). */
  pieceChars: number;
  /** Awaited between two pieces (the demo pauses, so a person sees the text grow). */
  pause?: () => Promise<void>;
}

/** Cuts `text` into pieces of `size` characters, never between the halves of a surrogate pair. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    let end = Math.min(text.length, i + Math.max(1, Math.floor(size)));
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/**
 * Calls `request.onTextDelta` / `onToolCallDelta` with `reply` in pieces; does nothing when
 * the request has neither.
 *
 * @example
 * await playReply(request, reply, { pieceChars: 8 });
 * return reply;
 */
export async function playReply(request: ModelRequest, reply: ModelReply, { pieceChars, pause }: PlayOptions): Promise<void> {
  const { onTextDelta, onToolCallDelta } = request;
  if (onTextDelta && reply.content) {
    for (const piece of pieces(reply.content, pieceChars)) {
      onTextDelta(piece);
      await pause?.();
    }
  }
  if (!onToolCallDelta) return;
  for (const [index, call] of reply.toolCalls.entries()) {
    const args = pieces(call.function.arguments, pieceChars);
    onToolCallDelta({ index, id: call.id, name: call.function.name, arguments: args[0] ?? '' });
    for (const piece of args.slice(1)) {
      await pause?.();
      onToolCallDelta({ index, arguments: piece });
    }
    await pause?.();
  }
}
