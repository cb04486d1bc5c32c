import test from 'ava';
import type { Browser } from 'puppeteer-core';
import { launchChromium } from './helpers/browser.js';
import { useApi } from './helpers/env.js';

// The docs page as a person meets it: Debian's Chromium, headless, opens /docs without a key and
// must show every operation of /openapi.json, having loaded nothing from anywhere but the service.

const api = useApi(test);
let browser: Browser;

test.before(async () => {
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
});

interface Operation {
  tags?: string[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}

interface OpenApi {
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
}

test('/docs renders every operation of /openapi.json in a real browser, with no key and nothing loaded from elsewhere', async (t) => {
  const document = (await (await fetch(`${api.server.url}/openapi.json`)).json()) as OpenApi;
  const expected = Object.entries(document.paths)
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();

  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const requested: string[] = [];
  const failures: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('response', (answer) => {
    if (answer.status() >= 400) failures.push(`${answer.status()} ${answer.url()}`);
  });
  page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText}`));
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => failures.push(`page: ${String(error)}`));

  const response = await page.goto(`${api.server.url}/docs`, { waitUntil: 'networkidle0' });
  t.is(response?.status(), 200);
  await page.waitForSelector('.opblock-summary-path', { timeout: 15_000 });
  const shown = await page.$$eval('.opblock', (blocks) =>
    blocks.map(
      (block) =>
        `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
    ),
  );
  t.deepEqual([...new Set(shown)].sort(), expected);
  t.true(await page.$eval('body', (body) => body.innerText.includes('Book metadata service')));

  // Grouped by the document's tags, in its order, each operation under its own tag; no "default" group.
  const groups = await page.$$eval('.opblock-tag-section', (sections) =>
    sections.map((section) => ({
      tag: section.querySelector('.opblock-tag')?.getAttribute('data-tag') ?? '',
      operations: [...section.querySelectorAll('.opblock')].map(
        (block) =>
          `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    })),
  );
  t.deepEqual(
    groups.map((group) => group.tag),
    document.tags.map((tag) => tag.name),
  );
  t.false(groups.some((group) => group.tag === 'default'));
  const taggedAs = Object.fromEntries(
    Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.tags]),
    ),
  );
  for (const group of groups) {
    t.true(group.operations.length > 0, group.tag);
    for (const operation of group.operations) t.deepEqual(taggedAs[operation], [group.tag], operation);
  }

  if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
  await page.close();

  t.deepEqual(failures, []);
  const origin = new URL(api.server.url).origin;
  t.deepEqual(
    requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')),
    [],
  );
  t.true(requested.includes(`${origin}/openapi.json`));
});

test('every request body the document describes carries an example, for each of its media types', async (t) => {
  const document = (await (await fetch(`${api.server.url}/openapi.json`)).json()) as OpenApi;
  let bodies = 0;
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
        t.not(content.example, undefined, `${method.toUpperCase()} ${path} ${type}`);
        bodies += 1;
      }
    }
  }
  t.true(bodies >= 9);
});

test('the page and its files are public and unmetered like /openapi.json; any other name under /docs needs the key', async (t) => {
  const page = await fetch(`${api.server.url}/docs`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  t.is(page.headers.get('ratelimit-limit'), null);
  for (const [file, type] of [
    ['swagger-ui.css', /^text\/css/],
    ['swagger-ui-bundle.js', /^text\/javascript/],
    ['start.js', /^text\/javascript/],
  ] as const) {
    const asset = await fetch(`${api.server.url}/docs/${file}`);
    t.is(asset.status, 200, file);
    t.regex(asset.headers.get('content-type') ?? '', type, file);
    t.true((await asset.text()).length > 0, file);
  }
  for (const path of ['/docs/package.json', '/docs/..%2fpackage.json', '/docs/', '/Docs']) {
    t.is((await fetch(`${api.server.url}${path}`)).status, 401, path);
    t.is((await api.get(path)).status, 404, path);
  }
});
