import test from 'ava';
import { revokeApiKey } from '../src/stores/postgres/apiKeys.js';
import { newKey, useApi } from './helpers/env.js';

const api = useApi(test);
/** Without the fixture's key: these tests choose their own Authorization header. */
const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.server.url}${path}`, { headers });

async function expectUnauthorized(t: import('ava').ExecutionContext, headers: Record<string, string>, message: string) {
  const response = await get('/v1/isbn/9780439023481', headers);
  t.is(response.status, 401);
  t.is(response.headers.get('www-authenticate'), 'Bearer');
  t.deepEqual(await response.json(), { error: { code: 'unauthorized', message } });
}

test('a request without an Authorization header is refused with 401', (t) =>
  expectUnauthorized(t, {}, 'Authorization header is required: Bearer <API key>'));

test('an Authorization header that is not "Bearer <key>" is refused with 401', (t) =>
  expectUnauthorized(t, { Authorization: `Basic ${api.key}` }, "Authorization header must be 'Bearer <API key>'"));

test('a key sent with "Bearer" inside it (Bearer twice) is refused as malformed', (t) =>
  expectUnauthorized(t, { Authorization: `Bearer Bearer ${api.key}` }, 'API key is malformed: expected svc_live_<kid>_<secret>'));

test('a key of the wrong shape is refused as malformed', (t) =>
  expectUnauthorized(t, { Authorization: 'Bearer svc_test_abc_def' }, 'API key is malformed: expected svc_live_<kid>_<secret>'));

test('a well-formed key with an unknown kid is refused', (t) =>
  expectUnauthorized(t, { Authorization: `Bearer svc_live_zzzzzzzzzzzz_${'a'.repeat(52)}` }, 'API key is not valid'));

test('a known kid with the wrong secret is refused', (t) =>
  expectUnauthorized(t, { Authorization: `Bearer svc_live_${api.kid}_${'b'.repeat(52)}` }, 'API key is not valid'));

test('a valid key is accepted and the answer carries no usage data', async (t) => {
  const response = await get('/v1/isbn/9780439023481', api.auth);
  t.is(response.status, 404); // authenticated; the catalogue of this world is empty
  const body = (await response.json()) as Record<string, unknown>;
  t.deepEqual(Object.keys(body), ['error']);
});

test('a revoked key is refused by a running server within 5 seconds', async (t) => {
  const doomed = await newKey(api.world, 'doomed');
  t.is((await get('/v1/isbn/9780439023481', doomed.auth)).status, 404);
  await revokeApiKey(api.world.db, doomed.kid);
  const revokedAt = Date.now();
  let status = 0;
  while (Date.now() - revokedAt < 5_000) {
    status = (await get('/v1/isbn/9780439023481', doomed.auth)).status;
    if (status === 401) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.is(status, 401);
  t.true(Date.now() - revokedAt < 5_000);
  await expectUnauthorized(t, doomed.auth, 'API key has been revoked');
});

test('/health and /openapi.json answer without a key and without rate-limit headers', async (t) => {
  for (const path of ['/health', '/openapi.json']) {
    const response = await get(path);
    t.is(response.status, 200, path);
    t.is(response.headers.get('ratelimit-limit'), null, path);
  }
});

test('health reports each dependency it uses', async (t) => {
  const health = (await (await get('/health')).json()) as { status: string; checks: Record<string, { status: string }> };
  t.is(health.status, 'ok');
  t.is(health.checks.postgres?.status, 'up');
  t.is(health.checks.redis?.status, 'up');
});

test('unknown routes under /v1 need a key first, then answer 404 in the error shape', async (t) => {
  t.is((await get('/v1/nothing-here')).status, 401);
  const response = await get('/v1/nothing-here', api.auth);
  t.is(response.status, 404);
  t.deepEqual(await response.json(), { error: { code: 'not_found', message: 'no route GET /v1/nothing-here' } });
});

test('a path outside the public ones needs a key, then answers 404 in the error shape', async (t) => {
  t.is((await get('/nothing-here')).status, 401);
  const response = await get('/nothing-here', api.auth);
  t.is(response.status, 404);
  t.is(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
});

test('a method the route does not serve answers 405 with Allow', async (t) => {
  const response = await api.get('/v1/isbn/9780439023481', { method: 'DELETE' });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'HEAD, GET');
  t.is(((await response.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
});

test('every response carries a request id, and a sane one offered by the client is echoed', async (t) => {
  const response = await get('/health', { 'X-Request-Id': 'trace-123' });
  t.is(response.headers.get('x-request-id'), 'trace-123');
  t.truthy((await get('/health')).headers.get('x-request-id'));
});
