/**
 * The interactive `steward run` at the waits of a worker's MCP tool calls: approve_tool (each
 * call decided on its own), tool_input (each request of the call's server asked in turn: a form
 * filled field by field, a page to visit confirmed as visited) and tool_interrupted (run the call
 * again, skip it, or give its result). Each returns the event to send, or undefined when the
 * person quits. What the session refuses (an edit or a form's answer that does not match its
 * schema) comes back as a refusal, shown before the same wait is asked about again.
 */
import * as p from '@clack/prompts';
import type { UserEvent } from '../core/machines/session.events.js';
import type { ToolInputRequest, ToolInputResponse } from '../core/tools/server-tools.js';
import type { SessionView, ToolCallView } from '../core/view.js';
import { formFields, typedValue, type FormField } from '../core/tools/tool-input-form.js';
import { safeLine } from '../text/safe-text.js';
import { argumentsJson, pendingCalls } from './tool-calls.js';
import { askingCall, fieldLine, interruptedCall, visitLine } from './tool-waits.js';
import { jsonObjectOf } from './events.js';

/** The menus' last choice: leave with the session saved. */
export const QUIT = '__quit__';
const quitOption = { value: QUIT, label: 'Quit for now', hint: 'the session is saved' };

const APPROVE_CALL = 'approve';
const EDIT_CALL = 'edit';
const REJECT_CALL = 'reject';
const GIVE_RESULT = 'give';

const nameOf = (call: ToolCallView) => safeLine(`${call.server}.${call.tool}`);

/**
 * approve_tool: the first call that waits, decided on its own (approve, approve with arguments
 * typed in as a JSON object, or reject with a reason); the loop asks again for the next one
 * until none waits. An edit that is not a JSON object is refused at the prompt; one the tool's
 * schema refuses comes back from the session as a refusal, shown before the call is asked about again.
 */
export async function askToolCall(view: SessionView): Promise<UserEvent | undefined> {
  const pending = pendingCalls(view);
  const call = pending[0];
  if (!call) return undefined;
  const name = nameOf(call);
  const callId = call.callId;
  const choice = await p.select<string>({
    message: safeLine(`Tool call ${callId}: ${call.server}.${call.tool}${pending.length > 1 ? ` (1 of ${pending.length} waiting)` : ''}`),
    options: [
      { value: APPROVE_CALL, label: `Approve ${name}`, hint: 'it runs with these arguments once every call is decided' },
      { value: EDIT_CALL, label: 'Edit the arguments, then approve', hint: 'type a JSON object' },
      { value: REJECT_CALL, label: `Reject ${name}`, hint: 'it does not run; the model is told why' },
      quitOption,
    ],
  });
  if (p.isCancel(choice) || choice === QUIT) return undefined;
  if (choice === APPROVE_CALL) return { type: 'user_approved_tool_call', callId };
  if (choice === REJECT_CALL) return askReason(callId, 'Why? (the model reads it as the result of the call)');
  const typed = await p.text({
    message: `The arguments of ${name}, as a JSON object`,
    initialValue: argumentsJson(call.arguments, 0),
    validate: (v: string | undefined) => jsonObjectProblem(v ?? ''),
  });
  if (p.isCancel(typed)) return undefined;
  return { type: 'user_approved_tool_call', callId, arguments: JSON.parse(typed) as Record<string, unknown> };
}

async function askReason(callId: string, message: string): Promise<UserEvent | undefined> {
  const reason = await p.text({ message, placeholder: '(optional: Enter to skip)' });
  if (p.isCancel(reason)) return undefined;
  return { type: 'user_rejected_tool_call', callId, ...(reason?.trim() ? { reason: reason.trim() } : {}) };
}

/** Why typed arguments are not a JSON object (the prompt shows it and asks again), or undefined. */
function jsonObjectProblem(text: string): string | undefined {
  const parsed = jsonObjectOf(text);
  if ('notJson' in parsed) return safeLine(`Not JSON (${parsed.notJson}): type a JSON object, e.g. {"path": "a.md"}.`);
  if ('got' in parsed) return `Not a JSON object (${parsed.got}): type one, e.g. {"path": "a.md"}.`;
  return undefined;
}

/** tool_input: every request of the call's server, in turn; all are answered in one event. */
export async function askToolInput(view: SessionView): Promise<UserEvent | undefined> {
  const call = askingCall(view);
  if (!call?.input) return undefined;
  // Entries, then an object: a key the server chose ("__proto__") stays an own key.
  const responses: [string, ToolInputResponse][] = [];
  for (const request of call.input.requests) {
    const answer = request.mode === 'url' ? await askVisit(call, request) : await askForm(call, request);
    if (answer === undefined) return undefined;
    responses.push([request.key, answer]);
  }
  return { type: 'user_answered_tool_input', callId: call.callId, responses: Object.fromEntries(responses) };
}

/** The first choice on a request: answer it (fill the form, or say the page was visited), decline it, or cancel it. */
async function firstChoice(message: string, accept: { label: string; hint: string }): Promise<ToolInputResponse['action'] | undefined> {
  const choice = await p.select<string>({
    message,
    options: [
      { value: 'accept', ...accept },
      { value: 'decline', label: 'Decline', hint: 'the server is told you said no' },
      { value: 'cancel', label: 'Cancel', hint: 'the server is told you dismissed it without an answer' },
      quitOption,
    ],
  });
  return p.isCancel(choice) || choice === QUIT ? undefined : (choice as ToolInputResponse['action']);
}

async function askVisit(call: ToolCallView, request: Extract<ToolInputRequest, { mode: 'url' }>): Promise<ToolInputResponse | undefined> {
  const action = await firstChoice(
    [safeLine(`${call.server}.${call.tool} asks (${request.key}): ${request.message}`), safeLine(visitLine(request.url))].join('\n'),
    {
      label: 'Done: I have visited the page',
      hint: 'accept',
    },
  );
  return action && { action };
}

async function askForm(call: ToolCallView, request: Extract<ToolInputRequest, { mode: 'form' }>): Promise<ToolInputResponse | undefined> {
  const action = await firstChoice(safeLine(`${call.server}.${call.tool} asks (${request.key}): ${request.message}`), {
    label: 'Fill in the form',
    hint: 'accept: field by field',
  });
  if (action !== 'accept') return action && { action };
  const content: [string, string | number | boolean | string[]][] = [];
  for (const field of formFields(request.requestedSchema)) {
    const value = await askField(field);
    if (value === QUIT) return undefined;
    if (value !== undefined) content.push([field.name, value]);
  }
  return { action, content: Object.fromEntries(content) };
}

/** Where a choice list offers to leave an optional field out. */
const LEAVE_EMPTY = -1;

/** One field's value: picked (yes/no, a choice, several) or typed (text, a number); undefined leaves an optional one out. */
async function askField(field: FormField): Promise<string | number | boolean | string[] | undefined | typeof QUIT> {
  const message = safeLine(fieldLine(field));
  const choices = (field.choices ?? []).map((c, i) => ({ value: i, label: safeLine(c.label), ...(c.label !== c.value ? { hint: safeLine(c.value) } : {}) }));
  const leaveEmpty = field.required ? [] : [{ value: LEAVE_EMPTY, label: '(leave empty)' }];
  switch (field.kind) {
    case 'boolean': {
      if (field.required) {
        const yes = await p.confirm({ message, initialValue: field.default === true });
        return p.isCancel(yes) ? QUIT : yes;
      }
      const picked = await p.select<number>({ message, options: [{ value: 1, label: 'Yes' }, { value: 0, label: 'No' }, ...leaveEmpty] });
      return p.isCancel(picked) ? QUIT : picked === LEAVE_EMPTY ? undefined : picked === 1;
    }
    case 'choice': {
      const initial = field.choices!.findIndex((c) => c.value === field.default);
      const picked = await p.select<number>({ message, options: [...choices, ...leaveEmpty], ...(initial >= 0 ? { initialValue: initial } : {}) });
      return p.isCancel(picked) ? QUIT : picked === LEAVE_EMPTY ? undefined : field.choices![picked]!.value;
    }
    case 'choices': {
      const initial = Array.isArray(field.default) ? field.choices!.flatMap((c, i) => ((field.default as string[]).includes(c.value) ? [i] : [])) : [];
      const picked = await p.multiselect<number>({ message, options: choices, required: field.required, initialValues: initial });
      return p.isCancel(picked) ? QUIT : picked.length === 0 && !field.required ? undefined : picked.map((i) => field.choices![i]!.value);
    }
    default: {
      const typed = await p.text({
        message,
        ...(field.required ? {} : { placeholder: '(optional: Enter to skip)' }),
        ...(field.default !== undefined ? { initialValue: String(field.default) } : {}),
        validate: (v: string | undefined) => {
          const read = typedValue(field, v ?? '');
          return 'problem' in read ? read.problem : undefined;
        },
      });
      if (p.isCancel(typed)) return QUIT;
      const read = typedValue(field, typed ?? '');
      return 'value' in read ? read.value : undefined;
    }
  }
}

/** tool_interrupted: run the cut-off call again, skip it (with a reason), or give its result by hand. */
export async function askInterruptedCall(view: SessionView): Promise<UserEvent | undefined> {
  const call = interruptedCall(view);
  if (!call) return undefined;
  const { callId } = call;
  const choice = await p.select<string>({
    message: safeLine(`Tool call ${callId}: ${call.server}.${call.tool} was cut off, so it may or may not have taken effect`),
    options: [
      { value: APPROVE_CALL, label: `Run ${nameOf(call)} again`, hint: 'the same arguments; check first that running it twice does no harm' },
      { value: REJECT_CALL, label: 'Skip it', hint: 'it is not run again; the model is told it may or may not have taken effect' },
      { value: GIVE_RESULT, label: 'Give its result', hint: 'type what the call did: the model reads it as the result' },
      quitOption,
    ],
  });
  if (p.isCancel(choice) || choice === QUIT) return undefined;
  if (choice === APPROVE_CALL) return { type: 'user_approved_tool_call', callId };
  if (choice === REJECT_CALL) return askReason(callId, 'Why skip it? (the model reads it with the result of the call)');
  const result = await p.text({
    message: `The result of ${nameOf(call)}, as the model will read it`,
    validate: (v: string | undefined) => (v?.trim() ? undefined : 'Write the result (Ctrl-C to quit).'),
  });
  if (p.isCancel(result)) return undefined;
  return { type: 'user_gave_tool_result', callId, result: result.trim() };
}
