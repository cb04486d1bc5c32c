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
  // Redis stamps each call between its sending and its answer. The steps wait for moments measured
  // from the answers, in a window long enough for a slow machine; a run that was slower still
  // (a step answered so late that a call may lie on the other side of the window) decides nothing
  // and is run again with a new key, while a run in time is held to the exact statuses.
  const windowMs = 6_000;
  const quick = await startTestServer(world, { rateLimitMax: 3, rateLimitWindowS: windowMs / 1000 });
  try {
    /** The sorted statuses of `count` calls at once, and when they were sent and all answered. */
    const burst = async (auth: Record<string, string>, count: number) => {
      const sent = Date.now();
      const responses = await Promise.all(Array.from({ length: count }, () => fetch(`${quick.url}/v1/isbn/123`, { headers: auth })));
      return { statuses: responses.map((response) => response.status).sort(), sent, answered: Date.now() };
    };
    const until = (moment: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, moment - Date.now())));
    for (let attempt = 1; attempt <= 3; attempt++) {
      const { auth } = await newKey(world, `partial ${attempt}`);
      const first = await burst(auth, 2);
      t.deepEqual(first.statuses, [400, 400]);
      await until(first.answered + windowMs / 2);
      const second = await burst(auth, 2);
      // Once the first two calls have surely left the window.
      await until(first.answered + windowMs + 50);
      const third = await burst(auth, 3);
      if (second.answered >= first.sent + windowMs || third.answered >= second.sent + windowMs) {
        t.log(
          `attempt ${attempt} too slow to decide: bursts answered ${second.answered - first.sent} and ${third.answered - second.sent} ms after the one before was sent`,
        );
        continue;
      }
      // The first two calls are still in the window: one slot left.
      t.deepEqual(second.statuses, [400, 429]);
      // They have left it, the third call has not: two slots are free, not three.
      t.deepEqual(third.statuses, [400, 400, 429]);
      return;
    }
    t.fail('three attempts in a row too slow to decide');
  } finally {
    await quick.stop();
  }
});
