/**
 * How a route of Steward's HTTP servers is declared: once, with @hono/zod-openapi's
 * `createRoute` (method, path, params, query, headers, body, responses). `app.openapi` then
 * registers the handler, validates the request with the declared schemas and puts the route
 * in the app's OpenAPI document, so the three cannot disagree. A route module pairs the
 * declaration with a handler made from the app's dependencies (serve's ServeDeps, the
 * inspector's context).
 */
import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { Context, ValidationTargets } from 'hono';
import type { BlankEnv } from 'hono/types';
import * as z from 'zod';
import { readJsonBody } from './body.js';
import { invalidRequest } from './errors.js';

/** A declared route and how to mount it on an app, with `deps`. */
export interface RouteModule<D> {
  /** The declaration: what the app registers, validates and documents. */
  readonly route: RouteConfig;
  mount(app: OpenAPIHono<BlankEnv>, deps: D): void;
}

/** What a validator reports to a hook (the shape of @hono/zod-openapi's `Hook` argument). */
export type ValidationResult = { target: keyof ValidationTargets } & ({ success: true; data: unknown } | { success: false; error: z.ZodError });

/** A route's own answer to a request that broke its schema (throw an HttpError, or answer in the route's protocol); none: `refuseInvalid`'s. */
export type ValidationHook = (result: ValidationResult, c: Context) => Response | void;

/**
 * A route module from its declaration and a handler made from the app's dependencies. A
 * route that declares a JSON body reads it by `readJsonBody`'s rules before it is validated
 * (an empty body is `{}` when the body is optional), unless it brings its own middleware.
 *
 * @example
 * export const getSession = defineRoute(
 *   createRoute({ method: 'get', path: '/sessions/{id}', request: { params: SessionIdParams }, responses: { 200: jsonContent('The view', ViewResponse) } }),
 *   ({ host }: ServeDeps) => async (c) => c.json(await host.view(c.req.valid('param').id), 200),
 * );
 */
export function defineRoute<R extends RouteConfig, D>(route: R, handler: (deps: D) => RouteHandler<R>, hook?: ValidationHook): RouteModule<D> {
  const body = route.request?.body;
  const reads = body?.content['application/json'] !== undefined && route.middleware === undefined;
  const registered = reads ? { ...route, middleware: readJsonBody(body?.required ? {} : { emptyAs: {} }) } : route;
  return {
    route,
    mount(app, deps) {
      // The handler's own type was checked against the declaration above; the app's generic
      // signature cannot carry R through the list of modules.
      app.openapi(registered, handler(deps) as never, hook as never);
    },
  };
}

/** Mounts route modules on an app, each with `deps`. */
export function mountRoutes<D>(app: OpenAPIHono<BlankEnv>, modules: readonly RouteModule<D>[], deps: D): void {
  for (const module of modules) module.mount(app, deps);
}

/**
 * A JSON response of a declaration: its description and schema.
 *
 * @example
 * responses: { 200: jsonContent('The view', ViewResponse), 404: jsonContent('No such session', ErrorBody) }
 */
export function jsonContent<S extends z.ZodType>(description: string, schema: S) {
  return { description, content: { 'application/json': { schema } } };
}

const WHAT: Record<keyof ValidationTargets, string> = { json: 'body', form: 'form', query: 'query', param: 'path', header: 'header', cookie: 'cookie' };

/**
 * The default hook of Steward's apps: a request that broke its route's declared schema is a
 * 400 `invalid_request` in the one error body, naming each field and what is wrong with it
 * (`Invalid body: maxBurst: …`, `Invalid Last-Event-ID header: …`). `body` names the JSON
 * body in the message (a send says `event`).
 *
 * @example
 * new OpenAPIHono({ defaultHook: refuseInvalid() });
 */
export function refuseInvalid(body = 'body'): ValidationHook {
  return (result) => {
    if (result.success) return;
    const { issues } = result.error;
    if (result.target !== 'header') throw invalidRequest(issues, result.target === 'json' ? body : WHAT[result.target]);
    // A header's problems are the header's own: its name is the subject, not a path.
    const names = [...new Set(issues.map((i) => String(i.path[0] ?? '')))];
    throw invalidRequest(
      issues.map((i) => ({ path: i.path.slice(1), message: i.message })),
      `${names.join(', ')} header`,
    );
  };
}

/**
 * `schema` as the document shows it where the document's generator cannot render it (another
 * package's schema with `z.custom` parts): zod's own JSON Schema of it, `unrepresentable` parts
 * as any value. It validates as `schema` does.
 *
 * @example
 * request: { body: { required: true, content: { 'application/json': { schema: shownByZod(RunAgentInputSchema, 'input') } } } }
 */
export function shownByZod<S extends z.ZodType>(schema: S, io: 'input' | 'output'): S {
  const { $schema: _dialect, ...shown } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return schema.meta(shown) as S;
}
