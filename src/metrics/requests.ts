import { Counter, Histogram, type Registry } from 'prom-client';

// Seconds: a cached lookup answers in well under a millisecond, a store's wait runs out at 0.5 s, a batch at a few seconds.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Label = 'route' | 'method' | 'status';

/**
 * Requests counted by route template, method and status, and their latency by route template and
 * method. Labels are route templates (`/v1/isbn/:isbn`), never the URL: a scan of made-up paths
 * falls into one `(unmatched)` route, so the series stay as many as the routes.
 */
export class RequestMetrics {
  private readonly requests: Counter<Label>;
  private readonly latency: Histogram<Exclude<Label, 'status'>>;
  // The children per label set, kept so that a request costs a map lookup, not prom-client's label hashing.
  private readonly counted = new Map<string, { inc(): void }>();
  private readonly timed = new Map<string, { observe(seconds: number): void }>();

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'bookmeta_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'bookmeta_http_request_duration_seconds',
      help: 'Time from a request reaching the app to its answer, by route template and method.',
      labelNames: ['route', 'method'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    const timedKey = `${method} ${route}`;
    let timed = this.timed.get(timedKey);
    if (!timed) this.timed.set(timedKey, (timed = this.latency.labels({ route, method })));
    timed.observe(seconds);
    const countedKey = `${status} ${timedKey}`;
    let counted = this.counted.get(countedKey);
    if (!counted) this.counted.set(countedKey, (counted = this.requests.labels({ route, method, status: String(status) })));
    counted.inc();
  }
}
