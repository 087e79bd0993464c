/**
 * A fan-out's waits as AG-UI interrupts (core/machines/team.ts): several independent workers
 * proposed in one reply wait in one approve_step, each step an item decided on its own, and
 * their artifacts wait in one review_artifact, each accepted or rejected on its own. The chart
 * takes one item per send, so each item is an interrupt of its own: its id names the wait and
 * the item (interrupt-ids.ts), its message and answer schema the worker and the item, and an
 * answer to it decides that item and no other.
 */
import * as z from 'zod';
import type { SessionView, TeamItemView } from '../../core/view.js';
import { ArtifactAnswer, StepAnswer } from './answer-schemas.js';
import { artifactItemInterruptId, stepItemInterruptId } from './interrupt-ids.js';

/**
 * The items the open wait asks about: a fan-out's proposed steps (approve_step) or its
 * artifacts under review (review_artifact), in the order the manager proposed them; none at
 * any other wait, or when a single step or artifact waits.
 *
 * @example
 * waitItems(view).map((i) => i.item); // ['run_north', 'run_south', 'run_east'] while three steps wait
 */
export function waitItems(view: Pick<SessionView, 'waitingReason' | 'team'>): TeamItemView[] {
  if (view.waitingReason === 'approve_step') return view.team?.filter((i) => i.status === 'proposed') ?? [];
  if (view.waitingReason === 'review_artifact') return view.team?.filter((i) => i.status === 'submitted' && i.artifact) ?? [];
  return [];
}

/** The worker of an item as people read it: its id, and the role it runs as. */
const workerOf = (item: TeamItemView) => `${item.workerId}${item.roleId ? ` as ${item.roleId}` : ''}`;

/** The artifact an item of a review waits with (waitItems keeps only those with one). */
const artifactOf = (item: TeamItemView) => item.artifact!.id;

/** The answer to one item's interrupt: the wait's answer, which may name the item (its interrupt id names it anyway). */
function itemAnswer(view: SessionView, item: TeamItemView): z.ZodType {
  if (view.waitingReason === 'approve_step')
    return StepAnswer.extend({
      item: z
        .literal(item.item)
        .describe(`The step decided: ${workerOf(item)}'s run_worker call ${item.item} (default: this interrupt's)`)
        .optional(),
    }).describe(`Approve ${workerOf(item)}'s step ${item.item} (with edits) or reject it`);
  return ArtifactAnswer.extend({
    artifactId: z
      .literal(artifactOf(item))
      .describe(`The artifact decided: ${artifactOf(item)} by ${item.workerId} (default: this interrupt's)`)
      .optional(),
  }).describe(`Accept artifact ${artifactOf(item)} by ${item.workerId} (with edits) or reject it`);
}

/**
 * What a resume payload for a wait with items must match: the wait's answer naming the item it
 * decides (`item`, or `artifactId` in a review); null when the wait has no items. An answer
 * sent for an item's interrupt names it already (withInterruptTarget).
 *
 * @example
 * itemsAnswerSchema(view)?.parse({ item: 'run_south', approved: false, reason: 'Not south.' });
 */
export function itemsAnswerSchema(view: SessionView): z.ZodType | null {
  const items = waitItems(view);
  if (items.length === 0) return null;
  if (view.waitingReason === 'approve_step') {
    const listed = items.map((i) => `${i.item} (${workerOf(i)})`).join(', ');
    return StepAnswer.extend({
      item: z
        .string({ error: `Several steps wait, each decided on its own: name one with "item" (${listed})` })
        .describe(`The step decided: the run_worker call of one that waits (${listed})`),
    }).describe('Approve one step of the fan-out (with edits) or reject it');
  }
  const listed = items.map((i) => `${artifactOf(i)} (${i.workerId})`).join(', ');
  return ArtifactAnswer.extend({
    artifactId: z
      .string({ error: `Several artifacts are under review, each decided on its own: name one with "artifactId" (${listed})` })
      .describe(`The artifact decided: one under review (${listed})`),
  }).describe('Accept one artifact of the fan-in (with edits) or reject it');
}

/** What one item's interrupt says besides what every interrupt of the wait says (reason, deadline, metadata of the wait). */
export interface ItemInterruptParts {
  id: string;
  message: string;
  /** A step: its run_worker call, the tool call the approval concerns. */
  toolCallId?: string;
  responseSchema: Record<string, unknown>;
  /** Added to `metadata.steward`: the item, its worker, and in a review its artifact. */
  steward: { item: string; workerId: string; artifactId?: string };
}

/**
 * The parts of each item's interrupt, in the order the items wait.
 *
 * @example
 * itemInterruptParts(view).map((p) => p.id); // ['s1#w4/item/run_north', 's1#w4/item/run_south', 's1#w4/item/run_east']
 */
export function itemInterruptParts(view: SessionView): ItemInterruptParts[] {
  const items = waitItems(view);
  const wait = view.wait ?? 0;
  return items.map((item, i): ItemInterruptParts => {
    const responseSchema = z.toJSONSchema(itemAnswer(view, item), { unrepresentable: 'any' }) as Record<string, unknown>;
    const place = `${i + 1} of ${items.length}`;
    if (view.waitingReason === 'approve_step')
      return {
        id: stepItemInterruptId(view.id, wait, item.item),
        message: `Run ${workerOf(item)} (step ${item.item}, ${place} waiting): ${item.reason}`,
        toolCallId: item.item,
        responseSchema,
        steward: { item: item.item, workerId: item.workerId },
      };
    return {
      id: artifactItemInterruptId(view.id, wait, artifactOf(item)),
      message: `Review artifact ${artifactOf(item)} by ${item.workerId} (${place} under review).`,
      responseSchema,
      steward: { item: item.item, workerId: item.workerId, artifactId: artifactOf(item) },
    };
  });
}
