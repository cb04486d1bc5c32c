import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../log.js';

export interface MetricsEndpoint {
  /** Where Prometheus scrapes: `http://host:port/metrics`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `registry` at GET /metrics on a port of its own, apart from the public API: what a scrape
 * shows (routes, pool sizes, store outages) is for the operator, and a scrape never waits behind
 * the API's clients or counts against their rate limit. Anything else is a 404.
 */
export async function serveMetrics(registry: Registry, host: string, port: number, log: Logger): Promise<MetricsEndpoint> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response
        .writeHead(path === '/metrics' ? 405 : 404, { 'Content-Type': 'text/plain' })
        .end(path === '/metrics' ? 'GET only\n' : 'metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        log.error({ err: error }, 'metrics could not be collected');
        response.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics could not be collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/metrics`;
  log.info({ url }, 'metrics listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
