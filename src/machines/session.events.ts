/**
 * The nine user events of the contract: plain objects named as in the seed, each a strict
 * zod object so that `session.send()` refuses a malformed payload before the machine sees it.
 */
// A namespace import: bundlers drop the parts of zod that are not used (the `z` object would keep all of it).
import * as z from 'zod';

const text = z.string().trim().min(1, 'must not be empty');

/**
 * When the event happened. The runtime stamps it (`session.send()` sets it from its clock), so
 * that the machine's transitions stay pure: a time the context keeps comes from the event.
 */
const at = z.iso.datetime({ offset: true }).optional();

export const UserSelectedPackage = z.strictObject({ type: z.literal('user_selected_package'), at, packageId: text });
export const UserSubmittedInput = z.strictObject({ type: z.literal('user_submitted_input'), at, text });
export const UserConfirmedIntake = z.strictObject({ type: z.literal('user_confirmed_intake'), at });
export const UserApprovedNextStep = z.strictObject({ type: z.literal('user_approved_next_step'), at });
export const UserRejectedNextStep = z.strictObject({ type: z.literal('user_rejected_next_step'), at, reason: z.string().optional() });
export const UserAcceptedArtifact = z.strictObject({ type: z.literal('user_accepted_artifact'), at, artifactId: text });
export const UserRejectedArtifact = z.strictObject({ type: z.literal('user_rejected_artifact'), at, artifactId: text, reason: z.string().optional() });
export const UserAnsweredQuestions = z.strictObject({
  type: z.literal('user_answered_questions'),
  at,
  answers: z.record(z.string(), z.string()).describe('question id (q1, q2, …) → answer'),
});
export const UserSkippedQuestions = z.strictObject({ type: z.literal('user_skipped_questions'), at });

export const UserEventSchema = z.discriminatedUnion('type', [
  UserSelectedPackage,
  UserSubmittedInput,
  UserConfirmedIntake,
  UserApprovedNextStep,
  UserRejectedNextStep,
  UserAcceptedArtifact,
  UserRejectedArtifact,
  UserAnsweredQuestions,
  UserSkippedQuestions,
]);

export type UserEvent = z.infer<typeof UserEventSchema>;
export type UserEventType = UserEvent['type'];

export const userEventTypes = UserEventSchema.options.map((o) => o.shape.type.value) as UserEventType[];

export function isUserEventType(type: string): type is UserEventType {
  return (userEventTypes as string[]).includes(type);
}
