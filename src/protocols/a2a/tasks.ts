/**
 * A Steward session as one A2A task, read from the store: `contextId` and task id are both
 * the session id (a session is one request, so its context holds one task, which lives from
 * the first message to done). The task is `working` while the agents run, `input-required`
 * at every wait — its status message names the wait and carries the AG-UI interrupt (id,
 * reason, responseSchema, expiresAt) in a data part (a fan-out's wait: one per item), and in its
 * metadata the wait's deadline and deciders — and `completed` at done, with one A2A artifact
 * per accepted Steward artifact. Everything is built in the protocol's JSON form and parsed
 * with the SDK's own `fromJSON`, so the wire shape is the SDK's.
 */
import type { Interrupt } from '@ag-ui/core';
import { Artifact, Message, Task, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent, type StreamResponse } from '@a2a-js/sdk';
import type { SessionContext } from '../../core/machines/session.context.js';
import { storedState } from '../../runtime/persisted.js';
import type { Runtime } from '../../runtime/runtime.js';
import { acceptedArtifacts, type SessionView } from '../../core/view.js';
import type { SessionStore } from '../../store/session-store.js';
import { pendingRunWorkerCall } from '../ag-ui/events.js';
import { interruptFor, interruptsFor, waitTermsOf } from '../ag-ui/interrupts.js';
import { waitItems } from '../ag-ui/team-interrupts.js';
import { interruptId } from '../ag-ui/interrupt-ids.js';
import { waitsForFirstRequest } from '../ag-ui/waits.js';

/** A session as the A2A endpoint reads it. */
export interface A2AThread {
  view: SessionView;
  context: SessionContext;
  /** The open wait as an AG-UI interrupt (its id names the wait's number), else null. */
  interrupt: Interrupt | null;
  /** Whether the session still waits for its first request. */
  firstRequest: boolean;
  packageId: string | null;
}

/** The session `id` from the store, or null when there is none. */
export async function readA2AThread(deps: { runtime: Runtime; store: SessionStore }, id: string): Promise<A2AThread | null> {
  const stored = await deps.store.load(id);
  if (!stored) return null;
  const { snapshot, view } = storedState(deps.runtime.machine, stored);
  const interrupt = view.phase === 'waiting_user' ? interruptFor(view, pendingRunWorkerCall(snapshot.context)) : null;
  return { view, context: snapshot.context, interrupt, firstRequest: waitsForFirstRequest(view, snapshot.context), packageId: stored.packageId };
}

/** The A2A state of a session's phase. */
export function taskStateOf(view: SessionView): 'TASK_STATE_WORKING' | 'TASK_STATE_INPUT_REQUIRED' | 'TASK_STATE_COMPLETED' {
  if (view.phase === 'done') return 'TASK_STATE_COMPLETED';
  if (view.phase === 'waiting_user') return 'TASK_STATE_INPUT_REQUIRED';
  return 'TASK_STATE_WORKING';
}

const text = (value: string, metadata?: Record<string, unknown>) => ({ text: value, mediaType: 'text/plain', ...(metadata ? { metadata } : {}) });

/** What the status message says: the wait (its prompt, the artifact's bodies, the interrupt as data), or the summary at done. */
function statusParts(thread: A2AThread): unknown[] {
  const { view, interrupt } = thread;
  if (interrupt && waitItems(view).length > 0) return itemParts(view);
  if (interrupt) {
    const bodies = view.waitingReason === 'review_artifact' || view.waitingReason === 'revision' ? (view.artifact?.tags ?? []) : [];
    return [
      text(interrupt.message ?? ''),
      ...bodies.map((t) => text(t.body, { tag: t.tag, version: t.version })),
      { data: { interrupt, ...(view.pendingStep ? { step: view.pendingStep } : {}) }, mediaType: 'application/json' },
    ];
  }
  if (view.phase === 'done' && view.message) return [text(view.message)];
  return [];
}

/**
 * A wait with items (a fan-out's steps, a fan-in's artifacts): for each item its prompt and,
 * in a review, its artifact's bodies (`metadata { tag, version, artifactId }`), then a data part
 * per item, `{ interrupt, item }`: the item's own interrupt (its id names the wait and the
 * item) and the item as the view shows it. A message answers one item: its data part names it
 * (`item`, or `artifactId`), or its `metadata.steward.interruptId` is that item's interrupt id.
 */
function itemParts(view: SessionView): unknown[] {
  const items = waitItems(view);
  const interrupts = interruptsFor(view);
  const bodies = items.flatMap((item, i) => [
    text(interrupts[i]!.message ?? ''),
    ...(item.artifact?.tags ?? []).map((t) => text(t.body, { tag: t.tag, version: t.version, artifactId: item.artifact!.id })),
  ]);
  return [...bodies, ...items.map((item, i) => ({ data: { interrupt: interrupts[i], item }, mediaType: 'application/json' }))];
}

/** The task's status now. */
export function statusOf(thread: A2AThread, at = new Date()): TaskStatus {
  const { view, interrupt } = thread;
  const parts = statusParts(thread);
  // A wait with items is named by the wait's own id: an answer names its item (or the item's interrupt id).
  const waitId = interrupt && waitItems(view).length > 0 ? interruptId(view.id, view.wait!) : interrupt?.id;
  const message =
    parts.length > 0
      ? {
          messageId: waitId ?? `${view.id}#done`,
          contextId: view.id,
          taskId: view.id,
          role: 'ROLE_AGENT',
          parts,
          ...(waitId ? { metadata: { steward: { interruptId: waitId, wait: view.wait, waitingReason: view.waitingReason, ...waitTermsOf(view) } } } : {}),
        }
      : undefined;
  return TaskStatus.fromJSON({ state: taskStateOf(view), timestamp: at.toISOString(), ...(message ? { message } : {}) });
}

/** One A2A artifact per accepted Steward artifact; its parts are the bodies of its tags (metadata: tag, version). */
export function artifactsOf(context: SessionContext): Artifact[] {
  return acceptedArtifacts(context).map((view) =>
    Artifact.fromJSON({
      artifactId: view.id,
      name: `${view.workerId}: ${view.tags.map((t) => t.tag).join(', ')}`,
      parts: view.tags.map((t) => text(t.body, { tag: t.tag, version: t.version })),
      metadata: {
        steward: { workerId: view.workerId, ...(view.roleId ? { roleId: view.roleId } : {}), ...(view.revises ? { revises: view.revises } : {}) },
      },
    }),
  );
}

/** The whole task as `tasks/get` answers it (history left out: the session's journal is its history). */
export function taskOf(thread: A2AThread): Task {
  const status = statusOf(thread);
  return Task.fromJSON({
    id: thread.view.id,
    contextId: thread.view.id,
    status: TaskStatus.toJSON(status),
    artifacts: artifactsOf(thread.context).map((a) => Artifact.toJSON(a)),
    history: [],
    metadata: { steward: { packageId: thread.packageId, state: thread.view.state } },
  });
}

/** Stream responses, in the SDK's shape. */
export const stream = {
  task: (task: Task): StreamResponse => ({ payload: { $case: 'task', value: task } }),
  status: (id: string, status: TaskStatus): StreamResponse => ({
    payload: { $case: 'statusUpdate', value: TaskStatusUpdateEvent.fromJSON({ taskId: id, contextId: id, status: TaskStatus.toJSON(status) }) },
  }),
  /** A working status whose message says what runs now (a model round). */
  working: (id: string, note: string): StreamResponse =>
    stream.status(
      id,
      TaskStatus.fromJSON({
        state: 'TASK_STATE_WORKING',
        timestamp: new Date().toISOString(),
        message: { messageId: `${id}:${note}`, contextId: id, taskId: id, role: 'ROLE_AGENT', parts: [text(note)] },
      }),
    ),
  artifact: (id: string, artifact: Artifact): StreamResponse => ({
    payload: {
      $case: 'artifactUpdate',
      value: TaskArtifactUpdateEvent.fromJSON({ taskId: id, contextId: id, artifact: Artifact.toJSON(artifact), append: false, lastChunk: true }),
    },
  }),
};

/** The parts of a client's message: its data parts' values and its text. */
export function partsOf(message: Message): { data: unknown[]; text: string } {
  const data: unknown[] = [];
  const texts: string[] = [];
  for (const part of message.parts) {
    if (part.content?.$case === 'data') data.push(part.content.value);
    else if (part.content?.$case === 'text') texts.push(part.content.value);
  }
  return { data, text: texts.join('\n').trim() };
}
