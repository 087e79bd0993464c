/**
 * The two waits of a tool call under way, as the CLI shows them (`steward run`, `steward show`,
 * the autopilot's transcript): `tool_input`, where the call's server asks a person for input (a
 * form to fill, or a page to visit, whose domain is shown before its address so that a look-alike
 * link is seen for what it is), and `tool_interrupted`, a call cut off by a stopped process, with
 * the three ways to settle it. Each shows the `steward send` line that answers it. Bodies are raw
 * here: render.ts makes every block safe to print.
 */
import { callsOfWait, type ToolInputRequest } from '../core/tools/server-tools.js';
import type { SessionView, ToolCallView } from '../core/view.js';
import { formFields, urlDomain, type FormField } from '../core/tools/tool-input-form.js';
import { shellQuote } from './context.js';
import type { Block } from './render.js';
import { argumentsJson } from './tool-calls.js';

/** The call whose server asks for input (tool_input). */
export const askingCall = (view: SessionView): ToolCallView | undefined => callsOfWait(view.toolCalls, 'tool_input')[0];
/** The call cut off by a stopped process (tool_interrupted). */
export const interruptedCall = (view: SessionView): ToolCallView | undefined => callsOfWait(view.toolCalls, 'tool_interrupted')[0];

const callName = (call: ToolCallView) => `${call.server}.${call.tool}`;

/** "Visit (notes.example): https://…": the domain first, where the eye lands. */
export function visitLine(url: string): string {
  const domain = urlDomain(url);
  return domain === undefined ? `Visit (not a web address, do not open it): ${url}` : `Visit (${domain}): ${url}`;
}

/** One field of a form in words: its name, kind, whether it is required, its choices and rules, its title and description. */
export function fieldLine(field: FormField): string {
  const kind =
    field.kind === 'choice'
      ? `one of: ${field.choices!.map((c) => c.label).join(', ')}`
      : field.kind === 'choices'
        ? `any of: ${field.choices!.map((c) => c.label).join(', ')}`
        : field.kind === 'text'
          ? 'text'
          : field.kind;
  const facts = [kind, field.required ? 'required' : 'optional', ...field.rules].join('; ');
  const said = [field.title, field.description].filter((s): s is string => Boolean(s)).join(' — ');
  return `${field.name} (${facts})${said ? `: ${said}` : ''}`;
}

/** An answer that fits a form, to show the shape of `--responses`: each field's default or a stand-in. */
function exampleContent(fields: FormField[]): Record<string, unknown> {
  const example = (f: FormField): unknown => {
    if (f.default !== undefined) return f.default;
    if (f.kind === 'boolean') return true;
    if (f.kind === 'number' || f.kind === 'integer') return 1;
    if (f.kind === 'choice') return f.choices![0]?.value ?? '';
    if (f.kind === 'choices') return f.choices!.slice(0, 1).map((c) => c.value);
    return '…';
  };
  return Object.fromEntries(fields.filter((f) => f.required).map((f) => [f.name, example(f)]));
}

function requestBody(request: ToolInputRequest): string {
  if (request.mode === 'url') return [request.message, visitLine(request.url), 'Once you have been there: accept (done), or decline or cancel.'].join('\n');
  const fields = formFields(request.requestedSchema);
  return [request.message, fields.length ? 'Fields:' : 'The form has no fields: accept, decline or cancel.', ...fields.map((f) => `  ${fieldLine(f)}`)].join(
    '\n',
  );
}

/** tool_input: the call, each of its server's requests, and the command that answers them all. */
export function toolInputBlocks(view: SessionView): Block[] {
  const call = askingCall(view);
  if (!call) return [];
  const requests = call.input?.requests ?? [];
  const accepted = Object.fromEntries(
    requests.map((r) => [r.key, r.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: exampleContent(formFields(r.requestedSchema)) }]),
  );
  const declined = Object.fromEntries(requests.map((r) => [r.key, { action: 'decline' }]));
  const send = (responses: Record<string, unknown>) =>
    `  steward send ${view.id} answer-call --call ${call.callId} --responses ${shellQuote(argumentsJson(responses, 0))}`;
  return [
    {
      title: `Tool call ${call.callId} · ${callName(call)} asks you`,
      body: [`${callName(call)}: ${call.description ?? '(the server gives no description)'}`, 'Arguments:', argumentsJson(call.arguments)].join('\n'),
      tone: 'info',
    },
    ...requests.map((request): Block => ({
      title: `Request "${request.key}" of ${callName(call)} · ${request.mode === 'url' ? 'a page to visit' : 'a form'}`,
      body: requestBody(request),
      tone: 'step',
    })),
    {
      title: 'To answer',
      body: [
        'Answer every request by its key, e.g.',
        send(accepted),
        `or decline (or cancel) them: the call goes on without the input:`,
        send(declined),
        ...(call.input?.live ? ['The server asked on its live connection: only the process that ran the call can pass the answer on.'] : []),
      ].join('\n'),
      tone: 'step',
    },
  ];
}

/** tool_interrupted: the call cut off, that it may or may not have taken effect, and the three ways on. */
export function interruptedCallBlocks(view: SessionView): Block[] {
  const call = interruptedCall(view);
  if (!call) return [];
  const send = (args: string) => `steward send ${view.id} ${args}`;
  return [
    {
      title: `Interrupted tool call ${call.callId} · ${callName(call)}`,
      body: [
        `${callName(call)}: ${call.description ?? '(the server gives no description)'}`,
        `Arguments${call.edited ? ' (as edited)' : ''}:`,
        argumentsJson(call.arguments),
        'The process running this call stopped before the server answered: it may or may not have taken effect. It does not run again unless you say so.',
        'Choose one:',
        `  Run it again:     ${send(`approve-call --call ${call.callId}`)}`,
        `  Skip it:          ${send(`reject-call --call ${call.callId} [--reason TEXT]`)}  (the model is told it may or may not have taken effect)`,
        `  Give its result:  ${send(`give-result --call ${call.callId} --result TEXT`)}  (the model reads TEXT as the call's result)`,
      ].join('\n'),
      tone: 'step',
    },
  ];
}
