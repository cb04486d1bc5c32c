import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { RunningServer } from '../src/server.js';
import { createRouter } from '../src/http/app.js';
import { createWorld, startTestServer, type TestWorld } from './helpers/env.js';

let world: TestWorld;
let server: RunningServer;
let document: { openapi: string; paths: Record<string, Record<string, unknown>> };

test.before(async () => {
  world = await createWorld();
  server = await startTestServer(world);
  document = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof document;
});
test.after.always(async () => {
  await server?.stop();
  await world?.destroy();
});

test('/openapi.json is a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator();
  const result = await validator.validate(document as unknown as Parameters<Validator['validate']>[0]);
  t.deepEqual(result.errors ?? [], []);
  t.true(result.valid);
  t.is(validator.version, '3.1');
});

/** Every (method, path) the router serves, in OpenAPI's `{param}` spelling. */
function servedRoutes(): string[] {
  const router = createRouter(server.services);
  return router.stack.flatMap((layer) =>
    layer.methods.filter((method) => method !== 'HEAD').map((method) => `${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
  );
}

function documentedRoutes(): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
}

test('every route the router serves is in the document, and the document lists nothing else', (t) => {
  t.deepEqual(servedRoutes().sort(), documentedRoutes().sort());
});

test('every authenticated operation documents 401, 429, 500 and 503 with the error schema', (t) => {
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      const responses = (operation as { responses: Record<string, unknown> }).responses;
      for (const status of ['401', '429', '500', '503']) t.truthy(responses[status], `${method} ${path} ${status}`);
    }
  }
});

test('the Bearer scheme is declared and required by default', (t) => {
  const doc = document as unknown as { components: { securitySchemes: Record<string, { scheme: string }> }; security: unknown[] };
  t.is(doc.components.securitySchemes.bearer?.scheme, 'bearer');
  t.deepEqual(doc.security, [{ bearer: [] }]);
});
