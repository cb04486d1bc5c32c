import { z } from 'zod/v4';
import { health } from '../../services/health.js';
import type { Route } from '../route.js';
import { sendJson } from '../messages.js';

const readiness = z.object({ status: z.enum(['ready', 'draining']) }).meta({ id: 'Readiness' });

/** The routes of the service itself: public, neither metered nor rate limited. */
const UNMETERED = { access: 'public', cost: 'none', cache: 'none', tag: 'public' } as const;

/** `document` is the OpenAPI document of the whole table, rendered once, on first use: it does not change while the process runs. */
export function publicRoutes(document: () => object): Route[] {
  let openApiText: string | undefined;
  return [
    {
      name: 'health',
      method: 'GET',
      path: '/health',
      ...UNMETERED,
      reuse: 'never',
      doc: {
        summary: 'Health of the service and each dependency',
        description:
          'Public: no key, not metered, not rate limited. 200 when every dependency answers, 503 when one does not; each says only `up` or `down` (why is in the server log), and the stores are asked at most once a second. `metering.dropped` counts usage records lost to a full buffer.',
        responses: {
          '200': { description: 'Every dependency is up.', content: { 'application/json': { schema: health } } },
          '503': { description: 'At least one dependency is down.', content: { 'application/json': { schema: health } } },
        },
      },
      async handle(ctx, services) {
        const report = await services.health.report();
        sendJson(ctx, report, report.status === 'ok' ? 200 : 503);
      },
    },
    {
      name: 'ready',
      method: 'GET',
      path: '/ready',
      ...UNMETERED,
      reuse: 'never',
      doc: {
        summary: 'Whether this instance takes new requests, for a load balancer',
        description:
          'Public: no key, not metered, not rate limited. 200 while the instance serves; 503 from the moment it is told to stop (SIGTERM), while it drains: a balancer checking this route takes it out of rotation before it stops accepting. The stores are not asked: an outage of one answers the same on every instance (see `/health`).',
        responses: {
          '200': { description: 'Serving.', content: { 'application/json': { schema: readiness } } },
          '503': { description: 'Draining: send new requests elsewhere.', content: { 'application/json': { schema: readiness } } },
        },
      },
      handle(ctx, services) {
        const draining = services.readiness.draining;
        sendJson(ctx, { status: draining ? 'draining' : 'ready' }, draining ? 503 : 200);
      },
    },
    {
      name: 'openapi',
      method: 'GET',
      path: '/openapi.json',
      ...UNMETERED,
      doc: {
        summary: 'This document',
        description: 'Public: no key, not metered, not rate limited.',
        responses: { '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
      handle(ctx) {
        ctx.type = 'application/json';
        ctx.body = openApiText ??= JSON.stringify(document());
      },
    },
  ];
}
