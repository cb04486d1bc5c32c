import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How the test worlds that run at production's store wait ask their server: as a careful client
 * does. A 503 `unavailable` is asked again after its Retry-After, for up to a minute: on a
 * 2-core machine running several test files and other work, a query can now and then miss the wait
 * (and three misses in a row make the store count as away for a second), which production answers
 * the same way; a query that is slow in itself misses it every time and still fails its test. And
 * one request is under way at a time: a file's tests all start together, and their requests at once
 * would only queue inside the stores of a machine that other files load already, testing that queue
 * rather than the answers (the fault tests test it).
 */

const IN_FLIGHT = 1;
const PATIENCE_MS = 60_000;

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

export function patientFetch(): Fetch {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const slot = async (): Promise<() => void> => {
    if (inFlight >= IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve));
    else inFlight += 1;
    // A freed slot passes straight to the next waiter, which therefore does not count itself in.
    return () => {
      const next = waiting.shift();
      if (next) next();
      else inFlight -= 1;
    };
  };
  return async (url, init) => {
    const giveUpAt = Date.now() + PATIENCE_MS;
    for (;;) {
      const release = await slot();
      let response: Response;
      try {
        response = await fetch(url, init);
      } finally {
        release();
      }
      if (response.status !== 503 || Date.now() > giveUpAt) return response;
      const body = await response.clone().text();
      if (!body.includes('"code":"unavailable"')) return response;
      await response.body?.cancel();
      await sleep(Number(response.headers.get('retry-after') ?? 1) * 1_000);
    }
  };
}
