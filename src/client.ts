/**
 * `steward/client`: a typed client of `steward serve` for web pages and Node alike — no Node
 * built-in, `fetch` injectable, answers checked with the server's own zod schemas, failures
 * as the library's typed errors (re-exported here, the same classes as `steward/machine`'s,
 * so a page needs no other entry to tell them apart).
 *
 * @example
 * import { StewardClient } from 'steward/client';
 * const client = new StewardClient({ baseUrl: 'http://127.0.0.1:4800', token });
 */
export { StewardClient } from './client/client.js';
export type {
  Accepted,
  ClientOptions,
  FetchLike,
  JournalEntry,
  ReconnectOptions,
  SendAnswer,
  SendRequestOptions,
  SessionSummary,
  StreamMessage,
  StreamOptions,
  StreamTicket,
  ViewAnswer,
} from './client/client.js';
export * from './core/errors.js';
export type { SessionView, ArtifactView, DeadlineView, Phase, TeamItemView } from './core/view.js';
// A fan-out's items, as a page offers them: one decision per proposed step or artifact under review.
export { itemsDecidedBy, proposedItems, reviewedItems, type ReviewedItem } from './core/team-items.js';
export type { UserEvent, UserEventType } from './core/machines/session.events.js';
export type { SessionStreamEvent, SessionStreamEventType, StreamEventOf, WaitingReason } from './core/machines/stream-events.js';
