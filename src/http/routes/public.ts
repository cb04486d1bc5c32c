import { health } from '../../services/health.js';
import type { Route } from '../route.js';
import { sendJson } from '../messages.js';

/** The routes of the service itself: public, neither metered nor rate limited. */

/** `document` is the OpenAPI document of the whole table, rendered once, on first use: it does not change while the process runs. */
export function publicRoutes(document: () => object): Route[] {
  let openApiText: string | undefined;
  return [
    {
      name: 'health',
      method: 'GET',
      path: '/health',
      access: 'public',
      cost: 'none',
      cache: 'none',
      reuse: 'never',
      tag: 'public',
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
      name: 'openapi',
      method: 'GET',
      path: '/openapi.json',
      access: 'public',
      cost: 'none',
      cache: 'none',
      tag: 'public',
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
