/**
 * `steward`: the Node runtime — sessions with a journal in a store, a model behind them.
 * Everything in `steward/machine` (the browser-safe statechart, its events, views, types and
 * errors) is re-exported here too, so a Node app imports from one place. The other entries
 * hold what an app loads only when it needs it: `steward/testing` (scripted and demo models,
 * the transition test), `steward/inspect` (the inspector page, remote inspectors, diagrams,
 * the manual model), `steward/serve` (the HTTP API), `steward/postgres` (PostgresStore) and
 * `steward/store` (the SessionStore interface and its records, for writing a store).
 * Importing `steward` loads no HTTP or WebSocket module, and the `openai` SDK only once an
 * OpenAIModel makes its first call (test/api/loaded-modules.test.ts).
 *
 * @example
 * import { createRuntime, SqliteStore, OpenAIModel } from 'steward';
 *
 * const runtime = createRuntime({ model: new OpenAIModel({ model: 'gpt-4o-mini' }), store: new SqliteStore('steward.db') });
 * const session = await runtime.createSession({ packageId: 'short-story' });
 * const { view } = await session.send({ type: 'user_submitted_input', text: 'A ghost story in a lighthouse.' });
 * console.log(view.state, session.enabledEvents());
 */
export * from './machine.js';
export {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type CreateSessionOptions,
  type ForkOptions,
  type ResumeOptions,
  type SessionHistory,
  type UpgradeOptions,
  type UpgradeResult,
} from './runtime/runtime.js';
export type { SendOptions } from './runtime/send-keys.js';
export type { LeaseHandOver } from './runtime/session-lease.js';
// Webhooks: receivers for createRuntime({ webhooks }), the event names, the body a receiver gets.
export { WEBHOOK_EVENTS, WEBHOOK_EVENT_TYPES, parseEventFilter, type WebhookEventType } from './webhooks/events.js';
export { checkReceivers, type WebhookReceiver } from './webhooks/receivers.js';
export type { WebhookBody } from './webhooks/payload.js';
export type { TranscriptName } from './runtime/archive.js';
export { Session, type SendResult, type SendError } from './runtime/session.js';
export type { SessionEventListener, SubscribeOptions } from './runtime/session-events.js';
export { OpenAIModel, modelFromEnv } from './models/openai-model.js';
export { loadPackage, loadPackages, bundledPackagesDir, type SkillPackage, type WorkerSkill } from './skills/index.js';
export { MemoryStore } from './store/memory-store.js';
export { SqliteStore } from './store/sqlite-store.js';
export { listAll } from './store/list-page.js';
export { checkSessionId, SESSION_ID_MAX_CHARS } from './ids.js';
export { DEFAULT_LIMITS, MAX_BURST_LIMIT, type Limits } from './core/limits.js';
export { auditRows, auditRowsSince, sessionAuditRows, shownAtWait, shownSha256, type AuditWalk } from './runtime/audit-rows.js';
export { AUDIT_COLUMNS, AuditFormatSchema, AuditRowSchema, type AuditDecision, type AuditFormat, type AuditRow } from './runtime/audit-row.js';
export { auditHeader, auditLine } from './runtime/audit-output.js';
