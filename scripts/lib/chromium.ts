import puppeteer, { type Browser } from 'puppeteer-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Debian's Chromium, headless (the docs page's tests, the soak benchmark's plot). The background-networking flags keep it from reaching out at start:
 * this machine's closed network refuses those connections, many at a time.
 */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
