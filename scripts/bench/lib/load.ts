import autocannon, { type RequestSpec } from 'autocannon';

/** One load run against a server on this machine: requests per second and latency percentiles. */
export interface LoadResult {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

export interface LoadOptions {
  label: string;
  url: string;
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  /** A fresh path per request (uncached runs); default: the url's own path every time. */
  nextPath?: () => string;
  /** A fresh body per request; default: `body` every time. */
  nextBody?: () => string;
  connections?: number;
  durationS?: number;
  /** Cap on requests per second over all connections; default: as fast as the server answers. */
  rate?: number;
  /** A status other than 2xx that is the expected answer, not a failure (304 to a revalidation). */
  expectStatus?: number;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const { nextPath, nextBody } = options;
  const requests: RequestSpec[] | undefined =
    nextPath || nextBody
      ? [{ setupRequest: (request) => ({ ...request, ...(nextPath && { path: nextPath() }), ...(nextBody && { body: nextBody() }) }) }]
      : undefined;
  // autocannon treats a key that is present but undefined as a value: leave absent ones out.
  const result = await autocannon({
    url: options.url,
    connections: options.connections ?? 16,
    duration: options.durationS ?? 10,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.method ? { method: options.method } : {}),
    ...(options.body ? { body: options.body } : {}),
    ...(requests ? { requests } : {}),
    ...(options.rate ? { overallRate: options.rate } : {}),
  });
  return {
    label: options.label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures:
      result.errors +
      result.timeouts +
      result.non2xx -
      (options.expectStatus ? (result.statusCodeStats[String(options.expectStatus)]?.count ?? 0) : 0),
  };
}

export const formatLoad = (result: LoadResult): string =>
  `${result.label.padEnd(34)} ${result.rps.toFixed(0).padStart(7)} req/s   p50 ${result.p50.toFixed(1).padStart(5)} ms   p99 ${result.p99.toFixed(1).padStart(5)} ms` +
  (result.failures ? `   failures ${result.failures}` : '');

/** A request kind to load; `connections`, when given, is its own (else the run's). */
export type LoadRequest = Omit<LoadOptions, 'durationS'>;

/** Rounds of one request kind, combined: mean requests per second and mean latencies. */
function combined(label: string, results: LoadResult[]): LoadResult {
  const mean = (pick: (result: LoadResult) => number) => results.reduce((sum, result) => sum + pick(result), 0) / results.length;
  return {
    label,
    rps: mean((result) => result.rps),
    p50: mean((result) => result.p50),
    p99: mean((result) => result.p99),
    failures: results.reduce((sum, result) => sum + result.failures, 0),
  };
}

/**
 * Runs each request kind in short alternating rounds (after a warm-up of each), so that a change in
 * the machine's load during the run weighs on all of them alike. Returns one result per kind.
 */
export async function alternate(
  requests: LoadRequest[],
  options: {
    rounds: number;
    roundS: number;
    connections: number;
    measure?: (index: number, round: () => Promise<LoadResult>) => Promise<LoadResult>;
  },
): Promise<LoadResult[]> {
  for (const request of requests)
    await load({ ...request, label: 'warm-up', connections: request.connections ?? options.connections, durationS: 2 });
  const results = requests.map((): LoadResult[] => []);
  for (let round = 0; round < options.rounds; round++) {
    // Every other round runs backwards (A B, B A, ...): the kind measured first in a round runs
    // measurably slower, so it must not always be the same one.
    const order = [...requests.keys()];
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const round = () =>
        load({ ...requests[index]!, connections: requests[index]!.connections ?? options.connections, durationS: options.roundS });
      results[index]!.push(await (options.measure ? options.measure(index, round) : round()));
    }
  }
  return requests.map((request, index) => combined(request.label, results[index]!));
}
