import test from 'ava';
import puppeteer, { type Browser } from 'puppeteer-core';
import { useApi } from './helpers/env.js';

// The docs page as a person meets it: Debian's Chromium, headless, opens /docs without a key and
// must show every operation of /openapi.json, having loaded nothing from anywhere but the service.

const api = useApi(test);
let browser: Browser;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

test.before(async () => {
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});
test.after.always(async () => {
  await browser?.close();
});

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
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
  page.on('response', (answer) => { if (answer.status() >= 400) failures.push(`${answer.status()} ${answer.url()}`); });
  page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText}`));
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => failures.push(`page: ${String(error)}`));

  const response = await page.goto(`${api.server.url}/docs`, { waitUntil: 'networkidle0' });
  t.is(response?.status(), 200);
  await page.waitForSelector('.opblock-summary-path', { timeout: 15_000 });
  const shown = await page.$$eval('.opblock', (blocks) =>
    blocks.map((block) => `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
  );
  t.deepEqual([...new Set(shown)].sort(), expected);
  t.true(await page.$eval('body', (body) => body.innerText.includes('Book metadata service')));

  if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
  await page.close();

  t.deepEqual(failures, []);
  const origin = new URL(api.server.url).origin;
  t.deepEqual(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')), []);
  t.true(requested.includes(`${origin}/openapi.json`));
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
