/**
 * GET and PUT /api/layouts/:key: the laid-out charts the inspector keeps (kept-layouts.ts), so
 * a page draws a chart it laid out before without loading ELK. GET answers `{ placement }`,
 * null when none is kept (or the inspector keeps none: Info.keepsLayouts); PUT keeps one.
 */
import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { defineRoute, type RouteModule } from '../../http/route.js';
import { LAYOUT_KEY } from '../kept-layouts.js';
import { Placement } from '../placement.js';
import { json, type InspectorContext } from './context.js';

const LayoutParams = z.object({ key: z.string().regex(LAYOUT_KEY, 'a layout key is 64 lowercase hex digits (the SHA-256 the page makes)') });

const keptLayout = defineRoute(
  createRoute({
    method: 'get',
    path: '/layouts/{key}',
    summary: 'The layout kept under a key, or null',
    request: { params: LayoutParams },
    responses: { 200: { description: '{ placement }: the kept layout, or null' } },
  }),
  (ctx: InspectorContext) => async (c) => json(c, { placement: (await ctx.layouts?.get(c.req.valid('param').key)) ?? null }),
);

const keepLayout = defineRoute(
  createRoute({
    method: 'put',
    path: '/layouts/{key}',
    summary: 'Keep a laid-out chart under its key',
    request: { params: LayoutParams, body: { content: { 'application/json': { schema: Placement } }, required: true } },
    responses: { 200: { description: '{ kept }: whether it was kept (false: this inspector keeps none, or its folder cannot be written)' } },
  }),
  (ctx: InspectorContext) => async (c) => {
    if (!ctx.layouts) return json(c, { kept: false });
    // A folder that cannot be written (read-only, full) costs only the next page a layout: not an error of this request.
    const kept = await ctx.layouts.put(c.req.valid('param').key, c.req.valid('json')).then(
      () => true,
      () => false,
    );
    return json(c, { kept });
  },
);

export const layoutRoutes: readonly RouteModule<InspectorContext>[] = [keptLayout, keepLayout];
