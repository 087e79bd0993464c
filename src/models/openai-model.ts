/**
 * The OpenAI adapter: one Chat Completions call per model turn, on the official `openai` SDK.
 * Works with any OpenAI-compatible server (OpenAI, Azure, vLLM, Ollama, LM Studio…) through
 * `baseURL`. Retries with backoff (429, 408/409, 5xx, timeouts, dropped connections) are the
 * SDK's own; this file only maps requests, replies and errors.
 *
 * The SDK is imported on a model's first call, not with this module: `steward` exports this
 * class, and an app that never calls OpenAI (a scripted model, its own Model) should not
 * load the SDK's large module graph. Only types are imported statically.
 */
import type OpenAI from 'openai';
import type { ClientOptions } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { ModelError, UserError } from '../core/errors.js';
import { quotedSetting } from '../core/limits.js';
import type { Model, ModelReply, ModelRequest, ToolCall } from '../core/models/model.js';
import { streamedCompletion } from './openai-stream.js';
import { redactSecrets } from '../core/models/redact.js';
import { untilAborted } from '../core/until-aborted.js';

export const DEFAULT_MODEL = 'gpt-4o-mini';
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;
const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/**
 * Statuses that waiting cannot heal (bad request, key, permission, model or endpoint): the
 * SDK retries 5xx, so 501 would be tried three times. They are not retried at all.
 */
export const NOT_RETRIED_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 501]);
/** How much of a server's error text a message quotes. */
const ERROR_EXCERPT_CHARS = 300;

/** The SDK's class (its error classes hang off it) and the client this model calls. */
interface LoadedSdk {
  sdk: typeof OpenAI;
  client: OpenAI;
}

export interface OpenAIModelOptions {
  /** Falls back to `OPENAI_API_KEY` when omitted (looked up as the SDK does). */
  apiKey?: string;
  baseURL?: string;
  /** Model name sent to the server, also the label shown to users. */
  model: string;
  /** Per attempt, not in total: the SDK retries timeouts too. */
  timeoutMs?: number;
  maxRetries?: number;
  /** An injected client (tests, Azure…). Its own timeout/retries apply unless set here. */
  client?: OpenAI;
  fetch?: ClientOptions['fetch'];
}

/**
 * A model behind an OpenAI-compatible chat completions API (OpenAI, Azure, a local server), with streaming, retries and secrets masked in every error.
 *
 * @example
 * const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY });
 * const local = new OpenAIModel({ model: 'llama3', baseURL: 'http://127.0.0.1:11434/v1', apiKey: 'none' });
 * const runtime = createRuntime({ model });
 */
export class OpenAIModel implements Model {
  readonly label: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly baseURL: string;
  private readonly model: string;
  /** Exact values masked out of every error message (the key may be echoed back). */
  private readonly secrets: readonly string[];
  /** What the client is made with, on the first call. */
  private readonly options: OpenAIModelOptions;
  private readonly apiKey: string | null;
  /** The SDK and this model's client, once the first call has imported them; every call shares the one import. */
  private loading: Promise<LoadedSdk> | undefined;

  constructor(options: OpenAIModelOptions) {
    if (!options.model) throw new UserError('OpenAIModel needs a model name (set STEWARD_MODEL, e.g. "gpt-4o-mini").');
    this.model = options.model;
    this.label = options.model;
    this.options = options;
    const client = options.client;
    // Resolved here as the SDK's constructor resolves them (the same variables, trimmed, the
    // same default), so a missing key still fails now and baseURL is known before the SDK is.
    this.apiKey = client ? null : (options.apiKey ?? envValue('OPENAI_API_KEY') ?? null);
    if (!client && !this.apiKey && !envValue('OPENAI_ADMIN_KEY')) {
      throw new UserError('Cannot create the OpenAI client: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server).', {
        cause: new Error('No apiKey option, and neither OPENAI_API_KEY nor OPENAI_ADMIN_KEY is set.'),
      });
    }
    this.timeoutMs = options.timeoutMs ?? (client ? client.timeout : DEFAULT_TIMEOUT_MS);
    this.maxRetries = options.maxRetries ?? (client ? client.maxRetries : DEFAULT_MAX_RETRIES);
    this.baseURL = client ? client.baseURL : (options.baseURL === undefined ? envValue('OPENAI_BASE_URL') : options.baseURL) || OPENAI_BASE_URL;
    this.secrets = [options.apiKey ?? (client ? client.apiKey : this.apiKey)].filter((k): k is string => typeof k === 'string');
  }

  /** The SDK, imported once per model on its first call, and the client made with it. */
  private sdk(): Promise<LoadedSdk> {
    this.loading ??= import('openai').then(({ default: sdk }) => ({
      sdk,
      client: this.options.client ?? createClient(sdk, { ...this.options, apiKey: this.apiKey, baseURL: this.baseURL }),
    }));
    return this.loading;
  }

  async complete({ messages, tools, signal, onTextDelta, onToolCallDelta }: ModelRequest): Promise<ModelReply> {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      // Our ChatMessage is the wire shape already: sent as is, so transcripts replay anywhere.
      messages,
      // OpenAI rejects `tools: []` (and tool_choice without tools), so both are left out then.
      ...(tools.length > 0
        ? {
            tools: tools.map((t) => ({
              type: 'function' as const,
              function: { name: t.name, description: t.description, parameters: t.parameters },
            })),
            tool_choice: 'auto' as const,
          }
        : {}),
    };

    let completion: ChatCompletion;
    const loading = this.sdk();
    try {
      const options = { signal: signal ?? null, timeout: this.timeoutMs, maxRetries: this.maxRetries };
      // Streamed only when someone watches the reply: it is assembled to the same shape.
      const call = loading.then(({ client }) =>
        onTextDelta || onToolCallDelta
          ? streamedCompletion(client, body, options, { onTextDelta, onToolCallDelta })
          : client.chat.completions.create(body, options),
      );
      // The SDK checks the signal during fetch but not while it sleeps between retries (up to 8 s).
      completion = await untilAborted(call, signal);
    } catch (error) {
      // The SDK's error classes tell its failures apart; if the SDK itself failed to load, none is one.
      const sdk = await loading.then(
        (loaded) => loaded.sdk,
        () => undefined,
      );
      throw this.toModelError(error, signal, sdk);
    }
    return this.toReply(completion);
  }

  private toReply(completion: ChatCompletion): ModelReply {
    const choice = completion.choices?.[0];
    if (!choice) {
      throw new ModelError(
        `${capitalize(this.where())} returned no choices for model "${this.model}". Check that the server supports Chat Completions with this model.`,
      );
    }
    const message = choice.message;
    const toolCalls: ToolCall[] = (message.tool_calls ?? []).map((call) => {
      if (call.type !== 'function') {
        throw new ModelError(`${capitalize(this.where())} returned a "${call.type}" tool call; Steward only declares function tools. Try another model.`);
      }
      // `arguments` stays the raw string even when it is not valid JSON: the runtime validates
      // it and tells the model what was wrong, which a parse error here could not do.
      return { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } };
    });
    // A refusal arrives with content null; surface its text so the transcript shows why.
    const content = message.content ?? (typeof message.refusal === 'string' ? message.refusal : null);
    const reply: ModelReply = { content, toolCalls };
    if (completion.usage) {
      reply.usage = {
        promptTokens: completion.usage.prompt_tokens ?? 0,
        completionTokens: completion.usage.completion_tokens ?? 0,
      };
    }
    return reply;
  }

  /** A message that says what happened and what to do, secrets masked; the SDK error stays as `cause`. */
  private toModelError(error: unknown, signal: AbortSignal | undefined, sdk: typeof OpenAI | undefined): ModelError {
    if (ModelError.isInstance(error)) return error;
    const mapped = this.describeError(error, signal, sdk);
    return new ModelError(redactSecrets(mapped.message, this.secrets), { cause: mapped.cause });
  }

  private describeError(error: unknown, signal: AbortSignal | undefined, sdk: typeof OpenAI | undefined): ModelError {
    const where = this.where();
    const attempts = `${this.maxRetries + 1} attempt${this.maxRetries === 0 ? '' : 's'}`;
    if (signal?.aborted || (sdk && error instanceof sdk.APIUserAbortError)) {
      // The cause is the abort itself (the signal's reason) so callers can tell a stop apart.
      return new ModelError(`Model request aborted: the caller cancelled the call to ${where} (e.g. the session was stopped).`, {
        cause: signal?.reason ?? error,
      });
    }
    if (sdk && error instanceof sdk.APIConnectionTimeoutError) {
      return new ModelError(
        `Model request timed out: ${where} did not answer within ${this.timeoutMs} ms (${attempts}). Raise STEWARD_TIMEOUT_MS or check the server.`,
        { cause: error },
      );
    }
    if (sdk && error instanceof sdk.APIConnectionError) {
      const detail = describeCause(error);
      return new ModelError(
        `Could not connect to ${where}${detail ? ` (${detail})` : ''} after ${attempts}. Is the server at ${redactSecrets(this.baseURL)} running? Check OPENAI_BASE_URL.`,
        { cause: error },
      );
    }
    if (sdk && error instanceof sdk.APIError && typeof error.status === 'number') {
      // The SDK's message already starts with the status ("401 Incorrect API key provided").
      const said = excerpt(error.message.replace(new RegExp(`^${error.status}\\s*`), '')).replace(/\.+$/, '');
      return new ModelError(`${capitalize(where)} answered ${error.status}: ${said}. ${adviceFor(error.status, this.model, attempts)}`, {
        cause: error,
      });
    }
    const message = error instanceof Error ? error.message : String(error);
    return new ModelError(`Model request to ${where} failed: ${message}`, { cause: error });
  }

  private where(): string {
    return this.baseURL.replace(/\/+$/, '') === OPENAI_BASE_URL ? 'OpenAI' : `the server at ${redactSecrets(this.baseURL)}`;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The SDK's own lookup of a variable: trimmed, and an empty one is none. */
function envValue(name: string): string | undefined {
  return process.env[name]?.trim() || undefined;
}

function createClient(sdk: typeof OpenAI, options: Omit<OpenAIModelOptions, 'apiKey'> & { apiKey: string | null; baseURL: string }): OpenAI {
  try {
    return new sdk({
      // Resolved by the constructor (from the options, else OPENAI_API_KEY / OPENAI_BASE_URL), so the client uses what this model reports.
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      fetch: withoutHopelessRetries(options.fetch ?? globalThis.fetch),
    });
  } catch (error) {
    // The SDK throws at construction when no key is found at all.
    throw new UserError('Cannot create the OpenAI client: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server).', { cause: error });
  }
}

/**
 * Marks the responses in NOT_RETRIED_STATUSES with `x-should-retry: false`, the header the
 * SDK obeys before its own retry rules: a wrong key or model fails at once.
 */
function withoutHopelessRetries(fetchImpl: NonNullable<ClientOptions['fetch']>): NonNullable<ClientOptions['fetch']> {
  return async (...args) => {
    const response = await fetchImpl(...args);
    if (!NOT_RETRIED_STATUSES.has(response.status)) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * A server's error text, short: an HTML error page (a proxy's 502, a wrong base URL) becomes
 * its title or first heading plus a little text, never the whole page.
 */
export function excerpt(text: string): string {
  let out = text;
  if (/<\s*(!doctype|html|head|body|title|h1)\b/i.test(text)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1] ?? /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1];
    const body = text.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ');
    out = `an HTML page${title?.trim() ? ` "${title.trim()}"` : ''}: ${body}`;
  }
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > ERROR_EXCERPT_CHARS ? `${out.slice(0, ERROR_EXCERPT_CHARS)}…` : out;
}

function adviceFor(status: number, model: string, attempts: string): string {
  // Not retried (NOT_RETRIED_STATUSES): name the setting to fix, never "try again later".
  if (status === 400) return 'Retrying will not help: check STEWARD_MODEL and that the server supports tool calls.';
  if (status === 401) return 'Check OPENAI_API_KEY.';
  if (status === 403) return 'The key lacks access to this model or project: check OPENAI_API_KEY and STEWARD_MODEL.';
  if (status === 404) return `Check STEWARD_MODEL ("${model}") and that OPENAI_BASE_URL ends in /v1.`;
  if (status === 501) return 'The server does not implement Chat Completions: check OPENAI_BASE_URL (an OpenAI-compatible server, ending in /v1).';
  if (status === 429) return `Still rate limited after ${attempts}: wait and resume the session, or check your quota.`;
  if (status >= 500) return `The server kept failing (${attempts}): try again later or check the server's logs.`;
  return 'The server refused the request: check STEWARD_MODEL and that the server supports tool calls.';
}

/** undici hides the useful part (ECONNREFUSED…) two causes deep under "fetch failed". */
function describeCause(error: Error): string | undefined {
  let current: unknown = error.cause;
  let last: string | undefined;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    last = typeof code === 'string' ? code : current.message;
    current = current.cause;
  }
  return last;
}

/**
 * The OpenAI model configured by the environment, or undefined when nothing is configured
 * (the caller then falls back to the offline demo model).
 *
 * @example
 * const runtime = createRuntime({ model: modelFromEnv() ?? new DemoModel() }); // OPENAI_API_KEY, STEWARD_MODEL, OPENAI_BASE_URL
 */
export function modelFromEnv(env: NodeJS.ProcessEnv = process.env): Model | undefined {
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  const baseURL = nonEmpty(env.OPENAI_BASE_URL);
  if (!apiKey && !baseURL) return undefined;
  return new OpenAIModel({
    // Local servers (Ollama, LM Studio…) ignore the key, but the SDK insists on one.
    apiKey: apiKey ?? 'not-needed',
    // Explicit, so the SDK never reads process.env behind an `env` passed in here.
    baseURL: baseURL ?? OPENAI_BASE_URL,
    model: nonEmpty(env.STEWARD_MODEL) ?? DEFAULT_MODEL,
    timeoutMs: parseTimeout(env.STEWARD_TIMEOUT_MS),
  });
}

function parseTimeout(raw: string | undefined): number | undefined {
  const text = nonEmpty(raw);
  if (text === undefined) return undefined;
  const value = Number(text);
  // The SDK only accepts a positive integer number of milliseconds.
  if (!Number.isInteger(value) || value <= 0) {
    throw new UserError(`STEWARD_TIMEOUT_MS must be a positive whole number of milliseconds, got ${quotedSetting(raw ?? '')}.`);
  }
  return value;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
