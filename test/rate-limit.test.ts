import test from 'ava';
import type { RunningServer } from '../src/server.js';
import { createWorld, newKey, startTestServer, type TestWorld } from './helpers/env.js';

let world: TestWorld;
let servers: RunningServer[];

test.before(async () => {
  world = await createWorld();
  // Two instances: the budget lives in Redis, so they must share it.
  servers = [await startTestServer(world), await startTestServer(world)];
});
test.after.always(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await world?.destroy();
});

test('concurrent requests over two instances get exactly 120 successes per key, the rest 429', async (t) => {
  const { auth } = await newKey(world, 'burst');
  const responses = await Promise.all(
    Array.from({ length: 160 }, (_, index) => fetch(`${servers[index % 2]!.url}/v1/isbn/9780439023481`, { headers: auth })),
  );
  const statuses = responses.map((response) => response.status);
  t.is(statuses.filter((status) => status !== 429).length, 120);
  t.is(statuses.filter((status) => status === 429).length, 40);
  const limited = responses.find((response) => response.status === 429)!;
  t.deepEqual(await limited.json(), { error: { code: 'rate_limited', message: expectedMessage(limited) } });
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.is(limited.headers.get('ratelimit-limit'), '120');
  t.is(limited.headers.get('ratelimit-remaining'), '0');
});

function expectedMessage(response: Response): string {
  return `rate limit exceeded: 120 requests per 60 seconds; retry in ${response.headers.get('ratelimit-reset')} s`;
}

test('each /v1 answer says how much of the budget is left', async (t) => {
  const { auth } = await newKey(world, 'headers');
  const first = await fetch(`${servers[0]!.url}/v1/isbn/9780439023481`, { headers: auth });
  const second = await fetch(`${servers[1]!.url}/v1/isbn/9780439023481`, { headers: auth });
  t.is(first.headers.get('ratelimit-remaining'), '119');
  t.is(second.headers.get('ratelimit-remaining'), '118');
  t.is(first.headers.get('ratelimit-policy'), '120;w=60');
  t.true(Number(first.headers.get('ratelimit-reset')) <= 60);
});

test('keys have separate budgets', async (t) => {
  const spent = await newKey(world, 'spent');
  const fresh = await newKey(world, 'fresh');
  await Promise.all(Array.from({ length: 121 }, () => fetch(`${servers[0]!.url}/v1/isbn/123`, { headers: spent.auth })));
  t.is((await fetch(`${servers[0]!.url}/v1/isbn/123`, { headers: spent.auth })).status, 429);
  t.is((await fetch(`${servers[0]!.url}/v1/isbn/123`, { headers: fresh.auth })).status, 400);
});

test('public routes are never rate limited', async (t) => {
  const responses = await Promise.all(Array.from({ length: 150 }, () => fetch(`${servers[0]!.url}/openapi.json`)));
  t.true(responses.every((response) => response.status === 200 && response.headers.get('ratelimit-limit') === null));
});

test('the window slides: a spent budget refills when Retry-After says', async (t) => {
  const quick = await startTestServer(world, { rateLimitMax: 3, rateLimitWindowS: 2 });
  try {
    const { auth } = await newKey(world, 'sliding');
    const call = () => fetch(`${quick.url}/v1/isbn/123`, { headers: auth });
    const burst = await Promise.all([call(), call(), call(), call()]);
    t.deepEqual(burst.map((response) => response.status).sort(), [400, 400, 400, 429]);
    const limited = burst.find((response) => response.status === 429)!;
    const retryAfterS = Number(limited.headers.get('retry-after'));
    t.true(retryAfterS >= 1 && retryAfterS <= 2);
    await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000 + 100));
    t.is((await call()).status, 400);
  } finally {
    await quick.stop();
  }
});

test('the window slides request by request: only the slots of calls older than the window come back', async (t) => {
  // A window long enough that the test's own latency cannot blur it: each step waits for a moment
  // measured from the answers (Redis stamps a call between its sending and its answer), so a slow
  // turn of the machine delays a step but cannot move a call to the other side of the window.
  const windowMs = 4_000;
  const quick = await startTestServer(world, { rateLimitMax: 3, rateLimitWindowS: windowMs / 1000 });
  try {
    const { auth } = await newKey(world, 'partial');
    const call = () => fetch(`${quick.url}/v1/isbn/123`, { headers: auth });
    /** The sorted statuses of `count` calls at once, and when they were sent and all answered. */
    const burst = async (count: number) => {
      const sent = Date.now();
      const statuses = (await Promise.all(Array.from({ length: count }, call))).map((response) => response.status).sort();
      return { statuses, sent, answered: Date.now() };
    };
    const until = (moment: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, moment - Date.now())));

    const first = await burst(2);
    t.deepEqual(first.statuses, [400, 400]);
    await until(first.answered + windowMs / 2);
    const second = await burst(2);
    // Inside the window of the first two calls: one slot left.
    t.true(second.answered < first.sent + windowMs, `the second burst was answered ${second.answered - first.sent} ms after the first was sent`);
    t.deepEqual(second.statuses, [400, 429]);
    // Once the first two calls have surely left the window, and while the third surely has not: two slots are free, not three.
    await until(first.answered + windowMs + 50);
    const third = await burst(3);
    t.true(third.answered < second.sent + windowMs, `the third burst was answered ${third.answered - second.sent} ms after the second was sent`);
    t.deepEqual(third.statuses, [400, 400, 429]);
  } finally {
    await quick.stop();
  }
});
