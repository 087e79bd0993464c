/**
 * The offline demo model: no LLM, no network. It lets the CLI and the inspector work on a
 * fresh machine with no API key — and says so: its label is "demo model (no LLM)" and every
 * text it writes is marked as demo output.
 *
 * It reads only what a real model would read (the prompt and the conversation) and plays a
 * plausible, deterministic part: the manager reads the request once per burst, then runs
 * the package's workers in chain order (each with approval) — the next one together with
 * every later one that is independent of it now, as the chart's fan-out allows (demo-fan-out.ts)
 * — and finishes when every worker has an accepted artifact; a worker submits short structured
 * text for its output tags.
 * Offered a folder's MCP tools (`<server>__list_directory`, `<server>__write_file`, as
 * @modelcontextprotocol/server-filesystem names them), a worker first looks at the folder,
 * then saves its text there as `<tag>.md` (a write a person approves), then submits.
 */
import type { ChatMessage, Model, ModelReply, ModelRequest, ToolCall } from '../core/models/model.js';
import { runnableTogether } from './demo-fan-out.js';
import { playReply } from './play-reply.js';

export const DEMO_MODEL_LABEL = 'demo model (no LLM)';

function section(text: string, heading: string): string {
  const start = text.indexOf(`## ${heading}`);
  if (start < 0) return '';
  const rest = text.slice(start + heading.length + 3);
  const end = rest.search(/\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

function call(name: string, args: unknown, n: number | string): ToolCall {
  return { id: `demo_${n}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

/** Pieces of a streamed demo reply: a few words at a time, as a model writes. */
const DEMO_PIECE_CHARS = 12;

export interface DemoModelOptions {
  /**
   * A pause between two pieces of a streamed reply (default 0: no timer, the pieces follow one
   * another at once). The CLI sets one on a terminal, so a person sees the draft grow.
   */
  pieceDelayMs?: number;
  /**
   * Whether the manager proposes independent workers together, as a fan-out (default true);
   * false: one worker per reply, as a manager that never fans out (the fan-out benchmark's
   * sequential case).
   */
  fanOut?: boolean;
}

const textOf = (m: ChatMessage | undefined) => (m && typeof m.content === 'string' ? m.content : '');

/**
 * A model that needs no LLM: it plays any package through to the end with fixed, labelled texts (the CLI uses it when no API key is set).
 *
 * @example
 * const runtime = createRuntime({ model: new DemoModel(), store: new MemoryStore() });
 * // Streamed replies pause between pieces, so a person sees them grow:
 * const watched = createRuntime({ model: new DemoModel({ pieceDelayMs: 15 }) });
 */
export class DemoModel implements Model {
  readonly label = DEMO_MODEL_LABEL;
  private calls = 0;
  private readonly pieceDelayMs: number;
  private readonly fanOut: boolean;

  constructor(options: DemoModelOptions = {}) {
    this.pieceDelayMs = Math.max(0, options.pieceDelayMs ?? 0);
    this.fanOut = options.fanOut ?? true;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    this.calls += 1;
    const reply =
      request.agent === 'manager'
        ? this.manager(request.messages)
        : this.worker(
            request.messages,
            request.tools.map((t) => t.name),
          );
    // Someone watches the reply as it is written: it streams, like a real model's.
    if (request.onTextDelta || request.onToolCallDelta) {
      const delay = this.pieceDelayMs;
      const signal = request.signal;
      const pause = delay > 0 ? () => new Promise<void>((resolve) => setTimeout(resolve, delay)).then(() => signal?.throwIfAborted()) : undefined;
      await playReply(request, reply, { pieceChars: DEMO_PIECE_CHARS, ...(pause ? { pause } : {}) });
    }
    return reply;
  }

  private manager(messages: ChatMessage[]): ModelReply {
    const system = textOf(messages[0]);
    const last = messages[messages.length - 1];
    const tags = (list: string) =>
      list
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t && t !== '-');
    const workers = [...section(system, 'Workers').matchAll(/^- ([\w-]+): [^[]*\[reads: ([^;]*); writes: ([^;\]]*)/gm)].map((m) => ({
      id: m[1]!,
      writes: m[3]!.trim(),
      inputTags: tags(m[2]!),
      outputTags: tags(m[3]!),
    }));
    const onBoard = [...section(system, 'Blackboard index').matchAll(/^- (\S+) v\d+ \(/gm)].map((m) => m[1]!);
    const accepted = new Set([...section(system, 'Artifacts').matchAll(/^- \w+ by ([\w-]+): accepted/gm)].map((m) => m[1]!));
    const say = (content: string, calls: ToolCall[]): ModelReply => ({ content, toolCalls: calls });

    // A new burst starts with a user message: look at the request first (a loop tool).
    if (last?.role === 'user' && /^The user rejected the proposed step/.test(textOf(last))) {
      return say(`[${DEMO_MODEL_LABEL}] Understood.`, [
        call('ask_user', { message: `[${DEMO_MODEL_LABEL}] You rejected that step. Tell me what to change, and I will plan again.` }, this.calls),
      ]);
    }
    if (last?.role === 'user') {
      return say(`[${DEMO_MODEL_LABEL}] Reading the request.`, [call('read_blackboard', { tags: ['request'] }, this.calls)]);
    }
    const open = workers.filter((w) => !accepted.has(w.id));
    if (open.length === 0) {
      const done = workers.map((w) => `${w.id} → ${w.writes}`).join(', ');
      return say(`[${DEMO_MODEL_LABEL}] All done.`, [call('finish', { summary: `[${DEMO_MODEL_LABEL}] Every step is accepted: ${done}.` }, this.calls)]);
    }
    const ids = open.map((w) => w.id);
    const next = (this.fanOut ? runnableTogether(workers, ids, onBoard) : ids.slice(0, 1)).map((id) => workers.find((w) => w.id === id)!);
    const runs = next.map((w, k) =>
      call(
        'run_worker',
        { workerId: w.id, reason: `Write ${w.writes} for the user's request.`, requiresApproval: true },
        k === 0 ? this.calls : `${this.calls}_${k + 1}`,
      ),
    );
    const named = next.map((w) => w.id).join(', ');
    return say(next.length > 1 ? `[${DEMO_MODEL_LABEL}] Next, at once: ${named}.` : `[${DEMO_MODEL_LABEL}] Next: ${named}.`, runs);
  }

  private worker(messages: ChatMessage[], tools: string[] = []): ModelReply {
    const brief = textOf(messages[1]);
    const outputTags = section(brief, 'Output tags').trim().split(/,\s*/).filter(Boolean);
    const task = /# Your task\n([^\n]*)/.exec(brief)?.[1] ?? '';
    const inputs = [...brief.matchAll(/^## Input "([^"]+)" \(v(\d+)\)\n([^\n]*)/gm)].map((m) => `${m[1]} v${m[2]}: ${m[3]!.slice(0, 80)}`);
    // Every line the person wrote (the rejection's reason and the revision's text), not only the first.
    const notes = /Their notes:\n([\s\S]*?)\n\nYour previous version:/.exec(section(brief, 'Revision'))?.[1]?.trim() ?? '';
    const quoted = notes && notes !== '(no notes)' ? notes.split('\n').join(' / ') : '';
    const outputs = Object.fromEntries(
      outputTags.map((tag) => [
        tag,
        [
          `# ${tag} (${DEMO_MODEL_LABEL})`,
          '',
          `Task: ${task}`,
          ...(inputs.length ? ['', 'Built from:', ...inputs.map((i) => `- ${i}`)] : []),
          ...(quoted ? ['', `Revised after your notes: ${quoted}`] : []),
          '',
          'This text was written by the offline demo model, not by an LLM. Set OPENAI_API_KEY (or OPENAI_BASE_URL) for real output.',
        ].join('\n'),
      ]),
    );
    const files = this.fileCall(messages, tools, outputs);
    if (files) return { content: `[${DEMO_MODEL_LABEL}] ${files.say}`, toolCalls: [files.call] };
    return { content: null, toolCalls: [call('submit', { outputs }, this.calls)] };
  }

  /** With a folder's tools: look at the folder, then save the first output there; undefined once both are done. */
  private fileCall(messages: ChatMessage[], tools: string[], outputs: Record<string, string>): { say: string; call: ToolCall } | undefined {
    const list = tools.find((t) => t.endsWith('__list_directory'));
    const write = tools.find((t) => t.endsWith('__write_file'));
    // The calls of this worker run so far (its conversation: the brief, then its own replies).
    const called = new Set(messages.flatMap((m) => (m.role === 'assistant' && m.tool_calls ? m.tool_calls.map((c) => c.function.name) : [])));
    if (list && !called.has(list)) return { say: 'Looking at the folder first.', call: call(list, { path: '.' }, this.calls) };
    const [tag, body] = Object.entries(outputs)[0] ?? [];
    if (write && tag !== undefined && !called.has(write))
      return { say: `Saving ${tag}.md in the folder.`, call: call(write, { path: `${tag}.md`, content: body }, this.calls) };
    return undefined;
  }
}
