/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Playing the model by hand (ManualModel): each pending request shows its agent and the
 * conversation so far, with a tool picker and JSON arguments (prefilled from the tool's
 * schema) to answer it — or a text-only reply, or a simulated failure.
 */
import type { ToolSpec } from '../../core/models/model.js';
import type { PendingRequest } from './api.js';
import { fill, h } from './dom.js';

export interface ModelActions {
  reply(id: string, reply: { content?: string | null; toolCalls: { name: string; arguments: unknown }[] }): Promise<void>;
  fail(id: string, message: string): Promise<void>;
}

let shownIds = '';

/** An arguments skeleton from a JSON Schema: required properties with placeholder values. */
export function skeleton(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, { type?: string | string[]; items?: unknown; enum?: unknown[] }>;
  const required = new Set((schema.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(props)) {
    if (!required.has(name)) continue;
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    out[name] =
      prop.enum?.[0] ??
      (type === 'string'
        ? ''
        : type === 'boolean'
          ? false
          : type === 'number' || type === 'integer'
            ? 0
            : type === 'array'
              ? []
              : type === 'object'
                ? {}
                : null);
  }
  return out;
}

function preview(content: unknown): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

function card(p: PendingRequest, actions: ModelActions): HTMLElement {
  const tools = new Map<string, ToolSpec>(p.tools.map((t) => [t.name, t]));
  const args = h('textarea', { class: 'tool-args', rows: 5, spellcheck: 'false', 'aria-label': 'tool arguments (JSON)' });
  const picker = h(
    'select',
    { class: 'tool-picker', 'aria-label': 'tool' },
    p.tools.map((t) => h('option', { value: t.name, title: t.description }, t.name)),
    h('option', { value: '' }, '(no tool call: text only)'),
  );
  const describe = h('p', { class: 'muted tool-description' });
  const sync = () => {
    const tool = tools.get(picker.value);
    args.disabled = !tool;
    args.value = tool ? JSON.stringify(skeleton(tool.parameters), null, 2) : '';
    describe.textContent = tool?.description ?? "The reply is plain text (the manager's text is shown to the user as ask_user).";
  };
  picker.addEventListener('change', sync);
  sync();
  const content = h('input', { type: 'text', class: 'reply-content', placeholder: 'assistant text (optional)', 'aria-label': 'assistant text' });
  const error = h('p', { class: 'refusal', role: 'alert' });
  const send = h('button', { type: 'submit', class: 'reply-send' }, 'Send reply');
  const form = h(
    'form',
    { class: 'model-request', 'data-request-id': p.id },
    h('h3', null, `${p.agent} asks (${p.id})`, p.sessionId ? h('span', { class: 'muted' }, ` · session ${p.sessionId}`) : null),
    h(
      'details',
      null,
      h('summary', null, `conversation: ${p.messages.length} messages`),
      h(
        'ol',
        { class: 'messages' },
        p.messages.map((m) =>
          h(
            'li',
            { class: `msg role-${m.role}` },
            h('strong', null, m.role),
            ' ',
            h(
              'pre',
              null,
              preview(m.content ?? ''),
              'tool_calls' in m && m.tool_calls?.length ? `\n→ ${m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join('\n→ ')}` : '',
            ),
          ),
        ),
      ),
    ),
    h('label', { class: 'field' }, h('span', null, 'tool'), picker),
    describe,
    h('label', { class: 'field' }, h('span', null, 'arguments (JSON)'), args),
    h('label', { class: 'field' }, h('span', null, 'text'), content),
    h(
      'div',
      { class: 'row' },
      send,
      h(
        'button',
        {
          type: 'button',
          class: 'reply-fail',
          onclick: () =>
            void actions.fail(p.id, 'Failed on purpose from the inspector.').catch((e) => {
              error.textContent = String(e.message ?? e);
            }),
        },
        'Make this call fail',
      ),
    ),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.textContent = '';
    let parsed: unknown = {};
    if (picker.value) {
      try {
        parsed = args.value.trim() ? JSON.parse(args.value) : {};
      } catch {
        // Malformed JSON is sent as it is: the runtime's validation answers the "model".
        parsed = args.value;
      }
    }
    send.disabled = true;
    void actions
      .reply(p.id, { content: content.value || null, toolCalls: picker.value ? [{ name: picker.value, arguments: parsed }] : [] })
      .catch((e: Error) => {
        error.textContent = e.message;
      })
      .finally(() => {
        send.disabled = false;
      });
  });
  return form;
}

export function renderModelPanel(host: HTMLElement, pending: PendingRequest[], actions: ModelActions): void {
  const ids = pending.map((p) => p.id).join(',');
  if (ids === shownIds && host.childElementCount > 0) return;
  shownIds = ids;
  host.hidden = false;
  fill(
    host,
    h('h2', null, 'You are the model'),
    pending.length === 0
      ? h('p', { class: 'muted', id: 'model-idle' }, 'No request is waiting. When an agent calls the model, its request appears here.')
      : pending.map((p) => card(p, actions)),
  );
}
