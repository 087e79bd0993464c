/**
 * What an A2A client is told when a request fails: the SDK answers any error with its own
 * message (a store fault's names a database file or a PostgreSQL host), so every method of
 * the agent's handler goes through `clientError` (src/http/errors.ts), the one mapping of
 * every route, before the SDK sees an error. A Steward error becomes the A2A error of its
 * kind, its code in the ErrorInfo's `metadata.code`: a bad request `RequestMalformedError`
 * (-32602), a missing session `TaskNotFoundError` (-32001), a fault of the server the
 * generic A2A error (-32603), a refusal to come back to (a limit, a server stopping)
 * `UnsupportedOperationError` (-32004) with `retryAfterSeconds`.
 */
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2AError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { clientError, type ClientError } from '../../http/errors.js';

/**
 * `error` as an A2A error a client may read; `log` gets the whole error when the client is not
 * told all of it. An A2A error passes as it is, but for one that carries a Steward code
 * (`metadata.code`, a refusal of the session) whose message is not for clients.
 *
 * @example
 * throw a2aClientError(error, (details) => log(`serve: an A2A request failed: ${details}`)).error;
 */
export function a2aClientError(error: unknown, log: (details: string) => void): { error: A2AError; safe: ClientError | null } {
  if (error instanceof A2AError) {
    const code = error.metadata?.code;
    if (code === undefined) return { error, safe: null };
    const safe = clientError({ code, message: error.message }, log);
    if (safe.message === error.message) return { error, safe };
    return { error: new UnsupportedOperationError({ message: safe.message, metadata: { ...error.metadata } }), safe };
  }
  const safe = clientError(error, log);
  const metadata = { code: safe.code, ...(safe.retryAfterSeconds !== undefined ? { retryAfterSeconds: String(safe.retryAfterSeconds) } : {}) };
  const options = { message: safe.message, metadata };
  if (safe.status === 400) return { error: new RequestMalformedError(options), safe };
  if (safe.status === 404) return { error: new TaskNotFoundError(options), safe };
  if (safe.status >= 500 && safe.retryAfterSeconds === undefined) return { error: new A2AError(options), safe };
  return { error: new UnsupportedOperationError(options), safe };
}

/**
 * An agent's request handler whose every failure is `a2aClientError`'s, and which keeps the
 * last one a client was told (`failure`): the route answers a refusal to come back to with its
 * HTTP status (429, 503) and Retry-After.
 *
 * @example
 * const guarded = new ClientSafeHandler(new StewardA2AHandler(deps, 'tiny', card, who), log);
 * const answer = await new JsonRpcTransportHandler(guarded).handle(body, context);
 * if (guarded.failure?.retryAfterSeconds) c.header('Retry-After', String(guarded.failure.retryAfterSeconds));
 */
export class ClientSafeHandler implements A2ARequestHandler {
  /** What the client was told of the last failure, when it came from Steward (not an A2A error of the handler's own). */
  failure: ClientError | null = null;

  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly log: (details: string) => void,
  ) {}

  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.mapped(error);
    }
  }

  private async *guardStream(stream: AsyncGenerator<StreamResponse, void, undefined>): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* stream;
    } catch (error) {
      throw this.mapped(error);
    }
  }

  private mapped(error: unknown): A2AError {
    const { error: mapped, safe } = a2aClientError(error, this.log);
    if (safe) this.failure = safe;
    return mapped;
  }

  getAgentCard(): Promise<AgentCard> {
    return this.guard(() => this.inner.getAgentCard());
  }
  getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    return this.guard(() => this.inner.getAuthenticatedExtendedAgentCard(params, context));
  }
  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.guard(() => this.inner.sendMessage(params, context));
  }
  sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return this.guardStream(this.inner.sendMessageStream(params, context));
  }
  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(() => this.inner.getTask(params, context));
  }
  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(() => this.inner.cancelTask(params, context));
  }
  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.guard(() => this.inner.createTaskPushNotificationConfig(params, context));
  }
  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.guard(() => this.inner.getTaskPushNotificationConfig(params, context));
  }
  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.guard(() => this.inner.listTaskPushNotificationConfigs(params, context));
  }
  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return this.guard(() => this.inner.deleteTaskPushNotificationConfig(params, context));
  }
  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return this.guardStream(this.inner.resubscribe(params, context));
  }
  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.guard(() => this.inner.listTasks(params, context));
  }
}
