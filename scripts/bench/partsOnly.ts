// A floor for the cached lookup: the app's own middlewares that a cached lookup runs (request id,
// request log line and usage record, key check, rate limit beside the cache read in Redis, the cache
// answer), composed alone, with no route matching, error rendering or guard around them. It answers
// cache hits only, for the benchmark.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { loadConfig } from '../../src/config.js';
import { authenticate } from '../../src/http/middleware/authenticate.js';
import { spendRequest } from '../../src/http/middleware/rateLimit.js';
import { recordRequests } from '../../src/http/middleware/requestRecords.js';
import { requestId } from '../../src/http/middleware/requestId.js';
import { sendJsonText } from '../../src/http/messages.js';
import type { RequestState } from '../../src/http/route.js';
import { createLogger } from '../../src/log.js';
import { buildServices, closeServices } from '../../src/wiring.js';

const config = loadConfig();
const log = createLogger(config.logLevel, { buffered: true });
const services = await buildServices(config, log);

const app = new Koa<RequestState>();
app.use(requestId());
app.use(recordRequests(log, services.meter));
app.use(authenticate(services.authenticator));
app.use(async (ctx) => {
  const answer = await services.pointCache.answer(
    ctx.path,
    ctx.state.requestId,
    () => Promise.reject(new Error('not a cached answer')),
    spendRequest(ctx, services.rateLimiter),
  );
  if (!('text' in answer) || !answer.cached) throw new Error('not a cached answer');
  ctx.set('X-Cache', 'HIT');
  sendJsonText(ctx, answer.text);
});

const callback = app.callback();
// Koa's callback answers its own errors: nothing is left to wait for.
const server = createServer((request, response) => void callback(request, response)).listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void closeServices(services).then(() => process.exit(0)));
});
