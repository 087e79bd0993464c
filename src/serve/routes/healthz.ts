import { createRoute } from '@hono/zod-openapi';
import { defineRoute, jsonContent } from '../../http/route.js';
import { PUBLIC, type ServeDeps } from '../route.js';
import { HealthResponse } from '../schemas.js';
import { webhookHealth } from '../../webhooks/status.js';

export const healthz = defineRoute(
  createRoute({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: 200 while the store answers and the server takes work (also while a write waits for a lock: storeBusy)',
    security: PUBLIC,
    responses: {
      200: jsonContent('Healthy', HealthResponse),
      503: jsonContent('The store does not answer, or the server is shutting down', HealthResponse),
    },
  }),
  ({ store, host, log, runtime }: ServeDeps) =>
    async (c) => {
      let reachable = true;
      try {
        // A primary-key read: proves the store answers without scanning anything.
        await store.load('healthz-probe');
      } catch (error) {
        reachable = false;
        log(`healthz: the store does not answer: ${error instanceof Error ? error.message : String(error)}`);
      }
      const ok = reachable && !host.isDraining;
      // The kind only: the file's path or the database's URL is the operator's business, and this route is public.
      // A store locked by another process for a moment (a CLI writing) still serves reads:
      // said, but no reason for a load balancer to take this server out.
      const storeBusy = store.busy === true;
      // Webhooks say how their outbox stands; a receiver that is down never makes this server unhealthy.
      const webhooks =
        reachable && runtime.webhooks.length && store.outbox ? await webhookHealth(store.outbox, runtime.webhooks.length).catch(() => undefined) : undefined;
      const health = { ok, store: store.kind ?? 'custom', draining: host.isDraining, storeBusy, ...(webhooks ? { webhooks } : {}) };
      return ok ? c.json(health, 200) : c.json(health, 503);
    },
);
