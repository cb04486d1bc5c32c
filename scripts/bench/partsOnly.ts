// A floor for the cached lookup: the parts it must run (key check, rate limit and cache read in
// Redis, request id, headers, request log line, usage record), in one Koa middleware with no router,
// no error rendering and no middleware chain around them. It answers hits only, for the benchmark.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { loadConfig } from '../../src/config.js';
import { rateLimitHeaders } from '../../src/http/middleware/rateLimit.js';
import { createLogger, requestLogger } from '../../src/log.js';
import { buildServices, closeServices } from '../../src/services/build.js';

const config = loadConfig();
const log = createLogger(config.logLevel, { chunked: true });
const services = await buildServices(config, log);
const logRequest = requestLogger(log);

const app = new Koa();
app.use(async (ctx) => {
  const started = performance.now();
  const requestId = randomUUID();
  ctx.set('X-Request-Id', requestId);
  const verdict = await services.authenticator.verify(ctx.get('Authorization').slice('Bearer '.length));
  if (!verdict.ok) throw new Error(`key refused: ${verdict.reason}`);
  const [decision, found] = await Promise.all([services.rateLimiter.take(verdict.kid), services.pointCache.lookup(ctx.url, requestId)]);
  if (!found || !('hit' in found)) throw new Error('not a cached answer');
  ctx.set(rateLimitHeaders(decision, services.rateLimiter.windowS));
  ctx.set('X-Cache', 'HIT');
  ctx.type = 'application/json';
  ctx.body = found.hit;
  const finished = performance.now();
  logRequest({ requestId, method: ctx.method, path: ctx.path, status: 200, ms: Math.round((finished - started) * 10) / 10, kid: verdict.kid });
  services.meter?.record({ kid: verdict.kid, method: ctx.method, route: '/v1/isbn/:isbn', status: 200, at: performance.timeOrigin + finished, latencyMs: finished - started });
});

const server = createServer(app.callback()).listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void closeServices(services).then(() => process.exit(0)));
});
