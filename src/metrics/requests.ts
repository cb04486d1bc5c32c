import { Histogram, type Registry } from 'prom-client';
import { readAtScrape } from './readAtScrape.js';

// Seconds: a cached lookup answers in well under a millisecond, a store's wait runs out at 0.5 s, a batch at a few seconds.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Label = 'route' | 'method';

interface Latencies {
  route: string;
  method: string;
  /** Requests per bucket, not cumulative: index i counts those above bucket i - 1 and at most bucket i; the last, those above every bucket. */
  perBucket: number[];
  sum: number;
  count: number;
}

/**
 * Requests counted by route template, method and status, and their latency by route template and
 * method. Labels are route templates (`/v1/isbn/:isbn`), never the URL: a scan of made-up paths
 * falls into one `(unmatched)` route, so the series stay as many as the routes.
 *
 * A request adds to plain tallies (a map lookup and a few additions); prom-client reads them at
 * scrape time. Its own counters and histograms hash the label values on every update, which cost
 * a cached lookup several per cent of its CPU time.
 */
export class RequestMetrics {
  private readonly counts = new Map<string, { route: string; method: string; status: string; count: number }>();
  private readonly latencies = new Map<string, Latencies>();

  constructor(registry: Registry) {
    readAtScrape(
      registry,
      'counter',
      'bookmeta_http_requests_total',
      'HTTP requests answered, by route template, method and status.',
      () => [...this.counts.values()].map(({ route, method, status, count }) => ({ labels: { route, method, status }, value: count })),
      ['route', 'method', 'status'],
    );
    new TalliedHistogram(registry, () => this.latencies.values());
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let latencies = this.latencies.get(key);
    if (!latencies)
      this.latencies.set(
        key,
        (latencies = { route, method, perBucket: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0), sum: 0, count: 0 }),
      );
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    latencies.perBucket[bucket]! += 1;
    latencies.sum += seconds;
    latencies.count += 1;
    const countKey = `${status} ${key}`;
    const counted = this.counts.get(countKey);
    if (counted) counted.count += 1;
    else this.counts.set(countKey, { route, method, status: String(status), count: 1 });
  }
}

const LATENCY = 'bookmeta_http_request_duration_seconds';
const LATENCY_HELP = 'Time from a request reaching the app to its answer, by route template and method.';

/**
 * The latency histogram as prom-client renders it, from RequestMetrics' tallies. prom-client builds
 * a histogram's scrape (and its get()) from getForPromString, which is not in its types: here it
 * reads the tallies instead of the histogram's own observations, of which there are none.
 */
class TalliedHistogram extends Histogram<Label> {
  constructor(
    registry: Registry,
    private readonly tallies: () => Iterable<Latencies>,
  ) {
    super({ name: LATENCY, help: LATENCY_HELP, labelNames: ['route', 'method'], buckets: LATENCY_BUCKETS, registers: [registry] });
  }

  getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: HistogramSample[] }> {
    const values: HistogramSample[] = [];
    for (const { route, method, perBucket, sum, count } of this.tallies()) {
      const labels = { route, method };
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, bucket) => {
        cumulative += perBucket[bucket]!;
        values.push({ metricName: `${LATENCY}_bucket`, labels: { le }, sharedLabels: labels, value: cumulative });
      });
      values.push(
        { metricName: `${LATENCY}_bucket`, labels: { le: '+Inf' }, sharedLabels: labels, value: count },
        { metricName: `${LATENCY}_sum`, labels: {}, sharedLabels: labels, value: sum },
        { metricName: `${LATENCY}_count`, labels: {}, sharedLabels: labels, value: count },
      );
    }
    return Promise.resolve({ name: LATENCY, help: LATENCY_HELP, type: 'histogram', aggregator: 'sum', values });
  }
}

/** One line of a histogram's scrape, as prom-client's renderer takes it: `le` apart from the series' own labels. */
interface HistogramSample {
  metricName: string;
  labels: { le?: number | string };
  sharedLabels: Record<Label, string>;
  value: number;
}
