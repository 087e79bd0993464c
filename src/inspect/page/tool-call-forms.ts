/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The parts of the event forms that decide a worker's MCP tool calls: one form per call the
 * wait is about (approve_tool: each pending call; tool_interrupted: the call cut off; tool_input:
 * the call whose server asks). Approving may edit the arguments as JSON; answering builds each
 * request of the server: a form generated from its schema (the reading the CLI uses too), or a
 * page to visit, shown with its domain before the link. Everything shown came from a server or
 * a model: it goes into the page as text nodes and attribute values (dom.ts), and a link is made
 * only of an http(s) address.
 */
import type { ToolInputRequest, ToolInputResponse } from '../../core/tools/server-tools.js';
import type { SessionView, ToolCallView } from '../../core/view.js';
import { formFields, urlDomain, type FormField } from '../../core/tools/tool-input-form.js';
import { h } from './dom.js';

/** Which calls each tool decision is about, by their status: the wait decides which are there. */
const STATUSES_OF: Readonly<Record<string, readonly ToolCallView['status'][]>> = {
  user_approved_tool_call: ['pending', 'interrupted'],
  user_rejected_tool_call: ['pending', 'interrupted'],
  user_answered_tool_input: ['asking'],
  user_gave_tool_result: ['interrupted'],
};

/** The calls an event's forms are for (one form each); none for an event that does not decide a call. */
export function callsFor(type: string, view: SessionView | null): ToolCallView[] {
  const statuses = STATUSES_OF[type];
  return statuses ? (view?.toolCalls ?? []).filter((c) => statuses.includes(c.status)) : [];
}

/** What sending each decision does to a call, by the call's status: the same event runs a pending call and runs an interrupted one again. */
const MEANING: Readonly<Record<string, Partial<Record<ToolCallView['status'], string>>>> = {
  user_approved_tool_call: { pending: 'approve: it runs', interrupted: 'run it again' },
  user_rejected_tool_call: { pending: 'reject: it does not run', interrupted: 'skip it: it is not run again' },
  user_gave_tool_result: { interrupted: 'give its result by hand' },
  user_answered_tool_input: { asking: 'answer what its server asks' },
};

/** What the form's call is and what sending the form does to it, above its fields. */
export function callHeading(type: string, call: ToolCallView): HTMLElement {
  const meaning = MEANING[type]?.[call.status];
  return h(
    'p',
    { class: 'call-heading' },
    h('code', null, `${call.server}.${call.tool}`),
    ` (${call.callId})`,
    meaning ? h('strong', { class: 'meaning' }, ` · ${meaning}`) : null,
    call.status === 'interrupted' ? h('span', { class: 'muted' }, ' (cut off when its process stopped: it may or may not have taken effect)') : null,
  );
}

/** The call's arguments as JSON to edit; left as they are, the call runs with the model's. */
export function argumentsEditor(call: ToolCallView | undefined): HTMLElement {
  const json = call ? JSON.stringify(call.arguments, null, 2) : '';
  return h('textarea', { name: 'arguments', rows: 4, 'data-original': json, 'aria-label': 'arguments as JSON' }, json);
}

/** The edited arguments, if they were edited: parsed, or the text as it is for the server to say what is wrong with it. */
export function editedArguments(form: HTMLFormElement): { arguments?: unknown } {
  const area = form.querySelector<HTMLTextAreaElement>('textarea[name="arguments"]');
  if (!area || area.value.trim() === '' || area.value === area.dataset.original) return {};
  try {
    return { arguments: JSON.parse(area.value) };
  } catch {
    return { arguments: area.value };
  }
}

const ACTIONS: Record<ToolInputRequest['mode'], [ToolInputResponse['action'], string][]> = {
  form: [
    ['accept', 'fill in and send'],
    ['decline', 'decline'],
    ['cancel', 'cancel'],
  ],
  url: [
    ['accept', 'done: I visited the page'],
    ['decline', 'decline'],
    ['cancel', 'cancel'],
  ],
};

function fieldInput(field: FormField): HTMLElement {
  const attrs = { 'data-field': field.name, 'data-kind': field.kind, 'aria-label': field.title ?? field.name };
  switch (field.kind) {
    case 'boolean':
      return h('input', { ...attrs, type: 'checkbox', checked: field.default === true });
    case 'choice':
    case 'choices':
      return h(
        'select',
        { ...attrs, multiple: field.kind === 'choices' },
        field.kind === 'choice' ? h('option', { value: '' }, field.required ? '(choose)' : '(leave empty)') : null,
        field.choices!.map((c) => {
          const chosen = Array.isArray(field.default) ? field.default.includes(c.value) : field.default === c.value;
          return h('option', { value: c.value, selected: chosen }, c.label);
        }),
      );
    default:
      return h('input', {
        ...attrs,
        type: field.kind === 'text' ? 'text' : 'number',
        ...(field.kind === 'integer' ? { step: 1 } : field.kind === 'number' ? { step: 'any' } : {}),
        value: field.default === undefined ? '' : String(field.default),
        placeholder: [field.required ? 'required' : 'optional', ...field.rules].join('; '),
      });
  }
}

function visitLink(url: string): HTMLElement {
  const domain = urlDomain(url);
  if (domain === undefined) return h('p', { class: 'refusal' }, `Not a web address, do not open it: ${url}`);
  return h(
    'p',
    { class: 'visit' },
    'Visit ',
    h('strong', { class: 'domain' }, domain),
    ': ',
    h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, url),
  );
}

function requestFieldset(request: ToolInputRequest, index: number): HTMLElement {
  const fields = request.mode === 'form' ? formFields(request.requestedSchema) : [];
  return h(
    'fieldset',
    { class: 'tool-input-request', 'data-request': request.key, 'data-mode': request.mode },
    h('legend', null, request.key),
    h('p', { class: 'message' }, request.message),
    request.mode === 'url' ? visitLink(request.url) : null,
    fields.map((f) =>
      h(
        'label',
        { class: 'field' },
        h('span', null, `${f.title ?? f.name}${f.required ? ' *' : ''}${f.description ? ` — ${f.description}` : ''}`),
        fieldInput(f),
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      ACTIONS[request.mode].map(([action, label]) =>
        h(
          'label',
          null,
          // A page to visit has no default: "done" is said only by someone who went there.
          h('input', { type: 'radio', name: `action-${index}`, value: action, checked: request.mode === 'form' && action === 'accept', required: true }),
          ` ${label}`,
        ),
      ),
    ),
  );
}

/** Each request of what the call's server asks, as a fieldset of its own. */
export function toolInputFields(call: ToolCallView | undefined): HTMLElement {
  const requests = call?.input?.requests ?? [];
  return h('div', { class: 'tool-input' }, requests.map(requestFieldset));
}

/** One form field's value as the server's schema wants it; undefined leaves it out (an empty optional field). */
function valueOf(el: HTMLInputElement | HTMLSelectElement): unknown {
  switch (el.dataset.kind) {
    case 'boolean':
      return (el as HTMLInputElement).checked;
    case 'choices': {
      const picked = [...(el as HTMLSelectElement).selectedOptions].map((o) => o.value);
      return picked.length ? picked : undefined;
    }
    case 'number':
    case 'integer':
      // Text that is not a number goes as it is: the runtime's check says what is wrong with it.
      return el.value.trim() === '' ? undefined : Number.isFinite(Number(el.value)) ? Number(el.value) : el.value;
    default:
      return el.value === '' ? undefined : el.value;
  }
}

/**
 * The answers to every request, by its key: the action picked and, for an accepted form, its
 * content. Built from entries: a key the server chose ("__proto__") stays an own key.
 */
export function toolInputResponses(form: HTMLFormElement): Record<string, { action: string; content?: Record<string, unknown> }> {
  const answer = (set: HTMLFieldSetElement) => {
    const action = set.querySelector<HTMLInputElement>('input[type="radio"]:checked')?.value ?? '';
    if (action !== 'accept' || set.dataset.mode !== 'form') return { action };
    const values = [...set.querySelectorAll<HTMLInputElement | HTMLSelectElement>('[data-field]')].map((el) => [el.dataset.field!, valueOf(el)] as const);
    return { action, content: Object.fromEntries(values.filter(([, value]) => value !== undefined)) };
  };
  return Object.fromEntries([...form.querySelectorAll<HTMLFieldSetElement>('fieldset[data-request]')].map((set) => [set.dataset.request!, answer(set)]));
}
