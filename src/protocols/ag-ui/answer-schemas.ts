/**
 * The answers Steward's waits take over AG-UI and A2A, as zod schemas made from the same zod
 * schemas the user events are checked with (core/machines/session.events.ts): an interrupt's
 * `responseSchema` is their JSON Schema, and a resume payload is parsed with them.
 */
import * as z from 'zod';
import {
  StepEdits,
  UserAcceptedArtifact,
  UserAnsweredToolInput,
  UserApprovedToolCall,
  UserGaveToolResult,
  UserRejectedArtifact,
  UserRejectedToolCall,
} from '../../core/machines/session.events.js';

/** approve_step: approve (optionally with a new task and/or another of the worker's roles) or reject with a reason. */
export const StepAnswer = z
  .strictObject({
    approved: z.boolean().describe('true runs the step; false sends it back to the manager'),
    reason: StepEdits.shape.reason.describe("approved: the worker's task as you edited it; rejected: why (the manager reads it)"),
    roleId: StepEdits.shape.roleId.describe("approved: another of the worker's roles"),
  })
  .describe('Approve the proposed step (with edits) or reject it');

/** review_artifact: accept (optionally with new bodies for some tags) or reject with notes. */
export const ArtifactAnswer = z
  .strictObject({
    accepted: z.boolean().describe('true accepts the artifact; false rejects it (you then describe the changes wanted)'),
    edits: UserAcceptedArtifact.shape.edits.describe('accepted: tag → new body, as you edited it'),
    reason: UserRejectedArtifact.shape.reason.describe('rejected: why (the worker reads it when it revises)'),
  })
  .describe('Accept the artifact under review (with edits) or reject it');

/**
 * approve_tool: a decision on one of the wait's MCP tool calls (the interrupt's toolCallId, or
 * another that waits): approve, maybe with edited arguments, or reject with a reason the model reads.
 */
export const ToolCallAnswer = z
  .strictObject({
    callId: UserApprovedToolCall.shape.callId.describe('The tool call decided (default: the interrupt’s toolCallId)').optional(),
    approved: z.boolean().describe('true runs the call; false rejects it (it never runs)'),
    arguments: UserApprovedToolCall.shape.arguments.describe("approved: the call's arguments as you edited them"),
    reason: UserRejectedToolCall.shape.reason.describe('rejected: why (the model reads it as the tool result)'),
  })
  .describe('Approve one tool call (with edited arguments) or reject it');

/** tool_input: the answers to what the call's server asked, by the key of each request (the server's own schema for a form's content). */
export const ToolInputAnswerPayload = z
  .strictObject({
    callId: UserAnsweredToolInput.shape.callId.describe('The call whose server asked (default: the interrupt’s toolCallId)').optional(),
    responses: UserAnsweredToolInput.shape.responses.describe('request key → { action: accept | decline | cancel, content (a form, accepted) }'),
  })
  .describe("Answer what the tool's server asked");

/**
 * tool_interrupted: the call cut off by a stopped process runs again (approved, maybe with edited
 * arguments), is skipped (not approved: the model is told), or gets its result by hand (`result`).
 */
export const InterruptedCallAnswer = z
  .strictObject({
    callId: UserApprovedToolCall.shape.callId.describe('The interrupted call (default: the interrupt’s toolCallId)').optional(),
    approved: z.boolean().describe('true calls the tool again; false skips it (the model is told it may or may not have taken effect)').optional(),
    arguments: UserApprovedToolCall.shape.arguments.describe("approved: the call's arguments as you edited them"),
    reason: UserRejectedToolCall.shape.reason.describe('skipped: why (the model reads it)'),
    result: UserGaveToolResult.shape.result.describe('instead of approved: the result you give by hand, as the model will read it').optional(),
  })
  .refine((a) => (a.approved === undefined) !== (a.result === undefined), 'give either `approved` (run again or skip) or `result` (its result by hand)')
  .describe('Run the interrupted tool call again, skip it, or give its result');
