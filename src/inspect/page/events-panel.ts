/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The events enabled now (`view.enabledEvents`: the state declares them and the guards allow
 * them, read from the chart), each a small form with its payload
 * fields: text, artifactId (prefilled with the artifact under review), reason, one answer
 * per question. "Show every user event" adds the others, to see how they are refused.
 * Forms are rebuilt only when what they offer changes, so typing survives live updates.
 * "Approve" takes an edited reason and role (sent as `edits`), "accept" the artifact's
 * bodies to edit (only changed ones are sent as `edits`); "acting as" fills every event's `by`.
 * A decision on a worker's tool call gets one form per call the wait is about (tool-call-forms.ts);
 * a decision on a fan-out's steps or artifacts, one form per item (team-view.ts).
 */
import type { SessionView, TeamItemView, ToolCallView } from '../../core/view.js';
import { itemsDecidedBy } from '../../core/team-items.js';
import { fill, h } from './dom.js';
import { artifactOf, itemHeading, stepOf } from './team-view.js';
import { argumentsEditor, callHeading, callsFor, editedArguments, toolInputFields, toolInputResponses } from './tool-call-forms.js';

export interface EventFormState {
  /** What the forms were built for; '' forces a rebuild. */
  signature: string;
  showAll: boolean;
  /** "Acting as": the `by` of the events sent from here (empty: none). */
  by?: string;
}

export interface EventsContext {
  view: SessionView | null;
  allEvents: string[];
  packages: { id: string; title: string }[];
  send: (event: Record<string, unknown>) => Promise<void>;
  disabledReason: string | null;
}

type FieldKind = 'item' | 'text' | 'textarea' | 'artifact' | 'package' | 'answers' | 'step-edit' | 'artifact-edits' | 'call' | 'call-arguments' | 'tool-input';
interface Field {
  name: string;
  kind: FieldKind;
  optional?: boolean;
  label: string;
}

const FIELDS: Record<string, Field[]> = {
  user_selected_package: [{ name: 'packageId', kind: 'package', label: 'package' }],
  user_submitted_input: [{ name: 'text', kind: 'textarea', label: 'text' }],
  user_confirmed_intake: [],
  user_approved_next_step: [
    { name: 'item', kind: 'item', optional: true, label: 'item' },
    { name: 'reason', kind: 'step-edit', optional: true, label: 'edit the reason (optional)' },
    { name: 'roleId', kind: 'step-edit', optional: true, label: 'edit the role (optional)' },
  ],
  user_rejected_next_step: [
    { name: 'item', kind: 'item', optional: true, label: 'item' },
    { name: 'reason', kind: 'text', optional: true, label: 'reason (optional)' },
  ],
  user_accepted_artifact: [
    { name: 'artifactId', kind: 'artifact', label: 'artifact' },
    { name: 'edits', kind: 'artifact-edits', optional: true, label: 'edit the bodies (optional)' },
  ],
  user_rejected_artifact: [
    { name: 'artifactId', kind: 'artifact', label: 'artifact' },
    { name: 'reason', kind: 'text', optional: true, label: 'reason (optional)' },
  ],
  user_answered_questions: [{ name: 'answers', kind: 'answers', label: 'answers' }],
  user_skipped_questions: [],
  user_approved_tool_call: [
    { name: 'callId', kind: 'call', label: 'call' },
    { name: 'arguments', kind: 'call-arguments', optional: true, label: 'edit the arguments (JSON, optional)' },
  ],
  user_rejected_tool_call: [
    { name: 'callId', kind: 'call', label: 'call' },
    { name: 'reason', kind: 'text', optional: true, label: 'reason (optional)' },
  ],
  user_answered_tool_input: [
    { name: 'callId', kind: 'call', label: 'call' },
    { name: 'responses', kind: 'tool-input', label: 'what the server asks' },
  ],
  user_gave_tool_result: [
    { name: 'callId', kind: 'call', label: 'call' },
    { name: 'result', kind: 'textarea', label: 'the result, as the model will read it' },
  ],
};

function questionsOf(view: SessionView | null) {
  return view?.questions ?? view?.artifact?.questions ?? [];
}

/** What one form decides: a tool call, or an item of a fan-out (none: the event as the wait takes it). */
interface Subject {
  call?: ToolCallView;
  item?: TeamItemView;
}

function fieldInput(type: string, field: Field, view: SessionView | null, packages: EventsContext['packages'], { call, item }: Subject): HTMLElement {
  const id = (suffix = '') => `field-${field.name}${suffix}`;
  switch (field.kind) {
    case 'item':
      // The form of one item names it; shown for every event, an item is typed in.
      return item
        ? itemHeading(type, item)
        : h('input', { name: field.name, type: 'text', 'aria-label': field.label, placeholder: 'the run_worker call of a fan-out step' });
    case 'textarea':
      return h('textarea', { name: field.name, rows: 3, placeholder: field.name === 'text' ? 'What do you want?' : field.label, 'aria-label': field.label });
    case 'call':
      // The form of one call names it; shown for every event, the call is typed in.
      return call
        ? h('div', null, h('input', { name: field.name, type: 'hidden', value: call.callId }), callHeading(type, call))
        : h('input', { name: field.name, type: 'text', 'aria-label': field.label, placeholder: 'call id' });
    case 'call-arguments':
      return argumentsEditor(call);
    case 'tool-input':
      return toolInputFields(call);
    case 'text':
      return h('input', { name: field.name, type: 'text', 'aria-label': field.label, placeholder: field.label });
    case 'artifact':
      return item?.artifact
        ? h('div', null, h('input', { name: field.name, type: 'hidden', value: item.artifact.id }), itemHeading(type, item))
        : h('input', { name: field.name, type: 'text', value: view?.artifact?.id ?? '', 'aria-label': field.label, placeholder: 'artifact id' });
    case 'step-edit': {
      const step = stepOf(view, item);
      const value = field.name === 'reason' ? (step?.reason ?? '') : (step?.roleId ?? '');
      return h('input', {
        name: field.name,
        type: 'text',
        value,
        'data-original': value,
        'aria-label': field.label,
        placeholder: field.name === 'roleId' ? 'a role of the worker' : "the worker's task",
      });
    }
    case 'artifact-edits': {
      const tags = artifactOf(view, item)?.tags ?? [];
      return h(
        'div',
        { class: 'artifact-edits' },
        tags.map((t) =>
          h(
            'label',
            null,
            h('span', null, `${t.tag} (v${t.version}, ${t.writtenBy})`),
            h('textarea', { rows: 4, 'data-edit-tag': t.tag, 'aria-label': `new body of ${t.tag}` }, t.body),
          ),
        ),
      );
    }
    case 'package':
      return h(
        'select',
        { name: field.name, 'aria-label': field.label },
        packages.map((p) => h('option', { value: p.id }, p.id)),
      );
    case 'answers': {
      const questions = questionsOf(view);
      if (questions.length === 0) {
        return h('textarea', { name: 'answers-json', rows: 2, 'aria-label': 'answers as JSON', placeholder: '{"q1": "…"}', id: id('-json') });
      }
      return h(
        'div',
        { class: 'answers' },
        questions.map((q) => h('label', null, h('span', null, `${q.id}: ${q.text}`), h('input', { type: 'text', 'data-answer': q.id, 'aria-label': q.text }))),
      );
    }
  }
}

function collect(form: HTMLFormElement, type: string, by: string): Record<string, unknown> {
  const event: Record<string, unknown> = { type, ...(by.trim() ? { by: by.trim() } : {}) };
  for (const field of FIELDS[type] ?? []) {
    if (field.kind === 'step-edit') {
      const el = form.elements.namedItem(field.name) as HTMLInputElement | null;
      // Only what the user changed is an edit.
      if (el && el.value.trim() && el.value.trim() !== el.dataset.original)
        event.edits = { ...(event.edits as object | undefined), [field.name]: el.value.trim() };
      continue;
    }
    if (field.kind === 'artifact-edits') {
      const areas = [...form.querySelectorAll<HTMLTextAreaElement>('[data-edit-tag]')].filter((a) => a.value !== a.defaultValue);
      if (areas.length) event.edits = Object.fromEntries(areas.map((a) => [a.dataset.editTag!, a.value]));
      continue;
    }
    if (field.kind === 'call-arguments') {
      Object.assign(event, editedArguments(form));
      continue;
    }
    if (field.kind === 'tool-input') {
      event.responses = toolInputResponses(form);
      continue;
    }
    if (field.kind === 'answers') {
      const inputs = [...form.querySelectorAll<HTMLInputElement>('[data-answer]')];
      if (inputs.length) {
        event.answers = Object.fromEntries(inputs.map((i) => [i.dataset.answer!, i.value]));
      } else {
        const raw = form.querySelector<HTMLTextAreaElement>('[name="answers-json"]')?.value.trim() ?? '';
        try {
          event.answers = raw ? JSON.parse(raw) : {};
        } catch {
          event.answers = raw; // the server says what is wrong with it
        }
      }
      continue;
    }
    const el = form.elements.namedItem(field.name) as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null;
    const value = el?.value ?? '';
    if (field.optional && value.trim() === '') continue;
    event[field.name] = value;
  }
  return event;
}

export function renderEvents(host: HTMLElement, state: EventFormState, ctx: EventsContext): void {
  const { view } = ctx;
  const enabled = view?.enabledEvents ?? [];
  const shown = state.showAll ? ctx.allEvents : enabled;
  const signature = JSON.stringify([
    view?.id,
    view?.state,
    shown,
    view?.artifact?.id,
    view?.artifact?.tags.map((t) => t.version),
    view?.pendingStep?.reason,
    questionsOf(view).map((q) => q.id),
    view?.toolCalls?.map((c) => [c.callId, c.status]),
    view?.team?.map((t) => [t.item, t.status, t.artifact?.id]),
    ctx.disabledReason,
    state.showAll,
  ]);
  if (signature === state.signature) return;
  state.signature = signature;
  if (!view) {
    fill(host, h('p', { class: 'muted' }, ctx.disabledReason ?? 'No session open.'));
    return;
  }
  if (ctx.disabledReason) {
    fill(host, h('p', { class: 'muted', id: 'events-disabled' }, ctx.disabledReason));
    return;
  }
  if (shown.length === 0) {
    fill(host, h('p', { class: 'muted' }, view.phase === 'done' ? 'The session is done.' : 'No user event is enabled now (the agents are working).'));
    return;
  }
  const actingAs: HTMLInputElement = h('input', {
    id: 'acting-as',
    type: 'text',
    value: state.by ?? '',
    maxlength: 120,
    placeholder: 'your name (optional)',
    'aria-label': 'acting as',
  });
  actingAs.addEventListener('input', () => {
    state.by = actingAs.value;
  });
  fill(
    host,
    h('label', { class: 'field acting-as' }, h('span', null, 'acting as (by)'), actingAs),
    shown.flatMap((type) => {
      const calls = callsFor(type, view);
      const items = itemsDecidedBy(type, view);
      if (calls.length) return calls.map((call) => eventForm(type, { call }));
      return items.length ? items.map((item) => eventForm(type, { item })) : [eventForm(type, {})];
    }),
  );

  /** One event's form; for a decision on a tool call or a fan-out's item, the form of that one. */
  function eventForm(type: string, subject: Subject): HTMLFormElement {
    const isEnabled = enabled.includes(type as never);
    const { call, item } = subject;
    // Outside a fan-out a step decision names no item: the field is offered only to see how it is refused.
    const fields = (FIELDS[type] ?? []).filter((f) => f.kind !== 'item' || item || state.showAll);
    const form: HTMLFormElement = h(
      'form',
      {
        class: `event-form${isEnabled ? '' : ' not-enabled'}`,
        'data-event': type,
        ...(call ? { 'data-call': call.callId } : {}),
        ...(item ? { 'data-item': item.item } : {}),
      },
      fields.map((field) => h('label', { class: 'field' }, h('span', null, field.label), fieldInput(type, field, view, ctx.packages, subject))),
      h(
        'button',
        { type: 'submit', 'data-send': type, title: isEnabled ? `Send ${type}` : `${type} is not enabled now: sending it shows how it is refused` },
        type,
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const button = form.querySelector('button')!;
      button.disabled = true;
      void ctx.send(collect(form, type, state.by ?? '')).finally(() => {
        button.disabled = false;
      });
    });
    return form;
  }
}
