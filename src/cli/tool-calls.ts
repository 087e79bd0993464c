/**
 * A worker's MCP tool calls as the CLI shows them in `approve_tool` (`steward run`, `steward
 * show`, the autopilot's transcript): for each call its server and tool, the tool's
 * description, the arguments as JSON, why it waits for a person, and, for a tool changed since
 * it was approved, what changed. The bodies are raw here: render.ts makes every block safe to
 * print (the arguments are also escaped as JSON first, so that what is shown parses back).
 */
import { canonicalJson } from '../core/text/canonical-json.js';
import { callsOfWait, type PinnedTool, type ToolApprovalSource } from '../core/tools/server-tools.js';
import type { SessionView, ToolCallView } from '../core/view.js';
import { safeJson } from '../text/safe-text.js';
import type { Block } from './render.js';

/** The calls of the wait that a person has not decided yet, in the model's order. */
export const pendingCalls = (view: SessionView): ToolCallView[] => callsOfWait(view.toolCalls, 'approve_tool');

/** Why a call waits for a person (or why it did not), in words. */
const APPROVAL_BY_TEXT: Readonly<Record<ToolApprovalSource, string>> = {
  deployment: "the deployment's rule asks a person (createRuntime({ toolApproval }))",
  manifest: "the package's manifest says so (approval of the server or of the tool)",
  default: 'the tool is not marked read-only, so a person decides (the safe default)',
  untrusted_server: 'the server is not trusted, so its read-only hint is not believed',
  read_only: 'runs without asking: a read-only tool of a trusted server',
};

/** A call's arguments as JSON to print: indented, with what a terminal would act on escaped (the JSON stays valid). */
export function argumentsJson(args: Record<string, unknown>, indent = 2): string {
  return safeJson(JSON.stringify(args, null, indent));
}

/** What differs between the definition a call was approved for and the tool as its server has it now. */
function changedText(changed: { before: PinnedTool; after: PinnedTool }): string {
  const { before, after } = changed;
  const lines: string[] = [];
  if ((before.title ?? '') !== (after.title ?? '')) lines.push(`title: ${JSON.stringify(before.title ?? '')} → ${JSON.stringify(after.title ?? '')}`);
  if ((before.description ?? '') !== (after.description ?? ''))
    lines.push(`description: ${JSON.stringify(before.description ?? '')} → ${JSON.stringify(after.description ?? '')}`);
  if (canonicalJson(before.inputSchema) !== canonicalJson(after.inputSchema))
    lines.push(`input schema: ${canonicalJson(before.inputSchema)} → ${canonicalJson(after.inputSchema)}`);
  if (canonicalJson(before.annotations ?? {}) !== canonicalJson(after.annotations ?? {}))
    lines.push(`hints: ${canonicalJson(before.annotations ?? {})} → ${canonicalJson(after.annotations ?? {})}`);
  if (lines.length === 0) lines.push('its definition (the digest differs)');
  return lines.map((l) => `  ${safeJson(l)}`).join('\n');
}

/** The tool's hints from its server, in words (only a trusted server's are believed for approval). */
function hintsOf(call: ToolCallView): string | undefined {
  const a = call.annotations;
  if (!a) return undefined;
  const hints = [
    a.readOnlyHint ? 'read-only' : undefined,
    a.destructiveHint ? 'destructive' : undefined,
    a.idempotentHint ? 'idempotent' : undefined,
    a.openWorldHint ? 'reaches outside (open world)' : undefined,
  ].filter((h): h is string => h !== undefined);
  return hints.length ? hints.join(', ') : undefined;
}

/** What became of a call that is no longer pending. */
function outcomeOf(call: ToolCallView): string {
  const who = call.decidedBy ? ` by ${call.decidedBy}` : '';
  switch (call.status) {
    case 'approved':
      return `Approved${who}${call.edited ? ', with edited arguments' : ''}: it runs once every call is decided.`;
    case 'rejected':
      return `Rejected${who}: it does not run${call.reason ? `. Reason: ${call.reason}` : '.'}`;
    case 'done':
      return call.resultGiven ? `Done: its result was given by hand${who}.` : `Done${who}.`;
    case 'asking':
      return 'Its server asks a person for input before it goes on.';
    case 'interrupted':
      return 'Cut off when the process running it stopped: it may or may not have taken effect.';
    default:
      return 'Waits for your decision.';
  }
}

/** One block per call of the wait: the pending ones to decide, the others as decided. */
export function toolCallBlocks(view: SessionView): Block[] {
  const calls = view.toolCalls ?? [];
  return calls.map((call, index) => {
    const pending = call.status === 'pending';
    const hints = hintsOf(call);
    const lines = [
      `${call.server}.${call.tool}: ${call.description ?? '(the server gives no description)'}`,
      ...(hints ? [`Hints: ${hints}`] : []),
      `Arguments${call.edited ? ' (as edited)' : ''}:`,
      argumentsJson(call.arguments),
      ...(pending ? [`Waits because ${APPROVAL_BY_TEXT[call.approvalBy]}.`] : []),
      ...(call.changed ? [`The tool changed since it was approved; it did not run. What changed:`, changedText(call.changed)] : []),
      pending ? `To decide: approve-call --call ${call.callId} [--arguments JSON], or reject-call --call ${call.callId} [--reason TEXT].` : outcomeOf(call),
    ];
    return {
      title: `Tool call ${index + 1} of ${calls.length} · ${call.server}.${call.tool} (${call.callId}) · ${call.status}`,
      body: lines.join('\n'),
      tone: pending ? 'step' : 'info',
    };
  });
}
