import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import type { Browser, Page } from 'puppeteer-core';
import { launchChromium } from './helpers/browser.js';
import { loadSampleCatalogue } from './helpers/catalogue.js';
import { newKey, startTestServer, useApi } from './helpers/env.js';
import { runCli } from './helpers/processes.js';
import { meteredCalls } from './helpers/usage.js';

// Keys for browsers: a key naming web origins is usable by pages of those origins (CORS on /v1 and
// /mcp), refused from any other page; preflights need no key and say nothing of paths or keys.

const api = useApi(test, { prepare: loadSampleCatalogue });
const HUNGER_GAMES = '9780439023481';

let browser: Browser;
let pages: Server;
/** One page server, two origins: the key names the first; the second is a foreign site. */
let allowed: string;
let foreign: string;
let browserKey: { kid: string; key: string };

test.serial.before(async () => {
  pages = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>shelf app</title>');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const { port } = pages.address() as AddressInfo;
  allowed = `http://127.0.0.1:${port}`;
  foreign = `http://localhost:${port}`;
  const created = await runCli(api.world.env, [
    'keys',
    'create',
    '--name',
    'shelf app',
    '--origin',
    allowed,
    '--origin',
    'https://shelf.example/',
  ]);
  if (created.code !== 0) throw new Error(created.stderr);
  const key = created.stdout.trimEnd().split('\n').at(-1)!;
  browserKey = { kid: key.split('_')[2]!, key };
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
});

async function pageOf(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  return page;
}

interface PageAnswer {
  status?: number;
  etag?: string | null;
  remaining?: string | null;
  body?: string;
  blocked?: string;
}

/** fetch() as the page's script makes it: the status and the headers the page may read, or the browser's refusal. */
const pageFetch = (
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; cache?: RequestCache },
): Promise<PageAnswer> =>
  page.evaluate(
    async (url, init) => {
      try {
        const response = await fetch(url, init);
        return {
          status: response.status,
          etag: response.headers.get('etag'),
          remaining: response.headers.get('ratelimit-remaining'),
          body: await response.text(),
        };
      } catch (error) {
        return { blocked: String(error) };
      }
    },
    url,
    init,
  );

test.serial(
  'keys create --origin and keys origins set the origins a key may be used from; an origin that is none is refused',
  async (t) => {
    const { rows } = await api.world.db.query<{ origins: string[] }>('select origins from api_keys where kid = $1', [browserKey.kid]);
    t.deepEqual(rows[0]!.origins, [allowed, 'https://shelf.example']);
    const list = await runCli(api.world.env, ['keys', 'list']);
    t.regex(list.stdout, new RegExp(`${browserKey.kid}\\s+shelf app\\s+\\S+Z\\s+${allowed} https://shelf.example`));

    const { kid } = await newKey(api.world, 'origins later');
    const changed = await runCli(api.world.env, ['keys', 'origins', kid, '--origin', 'https://Other.example']);
    t.is(changed.code, 0, changed.stderr);
    t.regex(changed.stdout, /may be used by pages of https:\/\/other\.example/);
    const cleared = await runCli(api.world.env, ['keys', 'origins', kid]);
    t.regex(cleared.stdout, /is server-side only/);
    t.deepEqual(
      (await api.world.db.query<{ origins: string[] }>('select origins from api_keys where kid = $1', [kid])).rows[0]!.origins,
      [],
    );

    const bad = await runCli(api.world.env, ['keys', 'create', '--name', 'bad', '--origin', 'https://shelf.example/app']);
    t.is(bad.code, 1);
    t.regex(bad.stderr, /not a web origin: "https:\/\/shelf.example\/app"/);
    t.is((await runCli(api.world.env, ['keys', 'origins', 'nosuchkid', '--origin', allowed])).code, 1);
  },
);

test.serial('in Chromium, a page of an origin its key names reads /v1 and /mcp with it; a page of another origin is blocked', async (t) => {
  const auth = { Authorization: `Bearer ${browserKey.key}` };
  const page = await pageOf(allowed);
  const lookup = await pageFetch(page, `${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: auth });
  t.is(lookup.status, 200, lookup.blocked);
  t.regex(lookup.body!, /The Hunger Games/);
  t.truthy(lookup.etag, 'ETag is exposed');
  t.regex(lookup.remaining ?? '', /^\d+$/, 'the budget is exposed');
  const revalidated = await pageFetch(page, `${api.server.url}/v1/isbn/${HUNGER_GAMES}`, {
    headers: { ...auth, 'If-None-Match': lookup.etag! },
  });
  t.is(revalidated.status, 304);
  const bulk = await pageFetch(page, `${api.server.url}/v1/isbn/batch?fields=title`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ isbns: [HUNGER_GAMES] }),
  });
  t.is(bulk.status, 200);
  const initialize = await pageFetch(page, `${api.server.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    }),
  });
  t.is(initialize.status, 200, initialize.body);
  // Errors are readable too: the page learns what went wrong.
  const missing = await pageFetch(page, `${api.server.url}/v1/isbn/9780306406157`, { headers: auth });
  t.is(missing.status, 404);

  // The same key from a foreign page, and a server-side key from the allowed page: the browser blocks both.
  const foreignPage = await pageOf(foreign);
  t.regex((await pageFetch(foreignPage, `${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: auth })).blocked ?? '', /TypeError/);
  t.regex(
    // From the network: the browser may reuse its cached answer for any key (a record is the same for every key).
    (await pageFetch(page, `${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: api.auth, cache: 'no-store' })).blocked ?? '',
    /TypeError/,
    'a key without origins answers no CORS',
  );
});

test.serial(
  'a request with a browser key from a foreign origin is a 403 in the error shape, metered; without Origin it is no page and is answered',
  async (t) => {
    const auth = { Authorization: `Bearer ${browserKey.key}` };
    const refused = await fetch(`${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: { ...auth, Origin: foreign } });
    t.is(refused.status, 403);
    t.is(refused.headers.get('access-control-allow-origin'), null);
    t.deepEqual(await refused.json(), {
      error: {
        code: 'forbidden',
        message: `this key may not be used from pages of ${foreign}: its owner names the origins that may use it`,
      },
    });
    t.is((await fetch(`${api.server.url}/mcp`, { method: 'POST', headers: { ...auth, Origin: foreign } })).status, 403);
    const server = await fetch(`${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: auth });
    t.is(server.status, 200);
    t.regex(server.headers.get('vary') ?? '', /Origin/);
    const plain = await fetch(`${api.server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: { ...api.auth, Origin: allowed } });
    t.is(plain.status, 200);
    t.is(plain.headers.get('access-control-allow-origin'), null, 'a key without origins answers no CORS');
    await api.server.services.meter?.flush();
    t.true((await meteredCalls(api.world.db, browserKey.kid)).some((call) => call.status === 403));
  },
);

test.serial('a preflight needs no key, spends no budget, answers alike for every path, and is limited per client address', async (t) => {
  // Its own Redis prefix: the Chromium test's preflights came from this address too.
  const server = await startTestServer(api.world, { preflightRateLimitMax: 3, redisPrefix: `${api.world.config.redisPrefix}preflights:` });
  t.teardown(() => server.stop());
  const preflight = (path: string) =>
    fetch(`${server.url}${path}`, {
      method: 'OPTIONS',
      headers: { Origin: foreign, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' },
    });
  const answers = await Promise.all([`/v1/isbn/${HUNGER_GAMES}`, '/v1/no/such/route', '/mcp'].map(preflight));
  const shapes = await Promise.all(
    answers.map(async (response) => ({
      status: response.status,
      body: await response.text(),
      headers: Object.fromEntries(
        [...response.headers].filter(([name]) => !['date', 'x-request-id', 'ratelimit-remaining'].includes(name)),
      ),
    })),
  );
  t.is(shapes[0]!.status, 204);
  t.is(shapes[0]!.headers['access-control-allow-origin'], foreign);
  t.regex(shapes[0]!.headers['access-control-allow-headers'] ?? '', /Authorization/);
  t.deepEqual(shapes[1], shapes[0]);
  t.deepEqual(shapes[2], shapes[0]);
  const over = await preflight('/v1/books/search');
  t.is(over.status, 429);
  t.is(((await over.json()) as { error: { code: string } }).error.code, 'rate_limited');
  // Key budgets are untouched, and no preflight is metered.
  const { auth, kid } = await newKey(api.world, 'after preflights');
  t.is((await fetch(`${server.url}/v1/isbn/${HUNGER_GAMES}`, { headers: auth })).headers.get('ratelimit-remaining'), '119');
  await server.services.meter?.flush();
  t.deepEqual(await meteredCalls(api.world.db, kid), [{ method: 'GET', route: '/v1/isbn/:isbn', status: 200 }]);
});
