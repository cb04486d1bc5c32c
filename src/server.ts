import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import type { Config } from './config.js';
import { deadlineOptions, limitConnections } from './connectionLimits.js';
import { ApiError, badRequest } from './errors.js';
import { createApp } from './http/app.js';
import { trustedSet } from './http/clientAddress.js';
import { refuseConnect } from './http/connect.js';
import { flushLog, type Logger } from './log.js';
import { serveMetrics } from './metrics/endpoint.js';
import { buildServices, closeServices } from './wiring.js';
import type { Services } from './services/context.js';
import { withWaitBudget } from './stores/guard.js';
import { ensureDatabase, migrate } from './stores/postgres/migrate.js';

export interface RunningServer {
  url: string;
  services: Services;
  /** Where Prometheus scrapes this process; null when metrics are off (METRICS_PORT unset). */
  metricsUrl: string | null;
  /**
   * Drains (GET /ready answers 503 and answers close their connections, for the drain delay), then
   * stops accepting, lets in-flight requests finish, flushes usage, closes connections.
   */
  stop(): Promise<void>;
}

/** Migrates, then serves the API on config.host:config.port (port 0 picks a free one). */
export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  await ensureDatabase(config.databaseUrl);
  const services = await buildServices(config, log);
  const applied = await migrate(services.pool);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  // Before the API listens: a metrics port already taken stops the start before anyone is served.
  const metrics =
    services.metrics && config.metricsPort !== null
      ? await serveMetrics(services.metrics.registry, config.metricsHost, config.metricsPort, log)
      : null;
  const app = createApp(services);
  const callback = app.callback();
  const server = createServer({ requireHostHeader: false, ...deadlineOptions(config.connectionLimits) });
  const gate = limitConnections(server, config.connectionLimits, trustedSet(config.trustedProxies));
  // Each request draws its waits for PostgreSQL and Elasticsearch from one budget (see WaitBudget).
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    // Every answer says what it is: a browser must never guess another type (a JSON body run as HTML).
    response.setHeader('X-Content-Type-Options', 'nosniff');
    // A draining server closes each connection after its answer, so that no client (a balancer's
    // pool) sends its next request on a connection about to be closed under it.
    if (services.readiness.draining) response.setHeader('Connection', 'close');
    if (gate.admit(request, response)) void withWaitBudget(() => callback(request, response));
  };
  server.on('request', handle);
  // Node's own answers to a missing Host and an unknown Expect have no body: the app gives them one (protocolRules).
  server.on('checkExpectation', handle);
  server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
  // A client may send its request and then close its side (`printf ... | nc`): it still gets its
  // answer. Node's default aborts a request not yet answered when the client half-closes.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) =>
    answerUnparsable(error, socket, gate.answering(socket as Socket)),
  );
  server.on('connect', refuseConnect);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  log.info({ url }, 'listening');
  let stopping: Promise<void> | null = null;
  return {
    url,
    services,
    metricsUrl: metrics?.url ?? null,
    stop: () =>
      (stopping ??= drain(server, services, log).then(async () => {
        await metrics?.close();
        await closeServices(services);
        log.info('stopped');
        await flushLog(log);
      })),
  };
}

/**
 * Node's HTTP parser refuses some requests before Koa sees them (headers over 16 KB, raw bytes that
 * are not HTTP, an unknown method, a request not received within its deadlines) and would answer a
 * bare status: answer them in the contract's error shape too, then close the connection, whose
 * stream can no longer be trusted.
 */
function answerUnparsable(error: Error & { code?: string }, socket: Duplex, answering: boolean): void {
  // An answer under way (the app's, to a request whose body never finished) cannot be interrupted by another.
  if (!socket.writable || error.code === 'ECONNRESET' || answering) {
    socket.destroy();
    return;
  }
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError(431, 'headers_too_large', 'request line and headers are too large: 16 KB at most')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError(408, 'request_timeout', 'request was not received in time')
        : badRequest(`malformed HTTP request: ${PARSER_ERRORS[error.code ?? ''] ?? 'the request could not be parsed'}`);
  const body = JSON.stringify(refusal.toJSON());
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** What a client can act on, for the parser's errors a client can cause. */
const PARSER_ERRORS: Record<string, string> = {
  HPE_INVALID_METHOD: 'unknown method',
  HPE_INVALID_URL: 'the request target has characters a URL may not hold',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value has characters it may not hold',
  HPE_INVALID_CONSTANT: 'not an HTTP/1.x request line',
  HPE_INVALID_VERSION: 'unsupported HTTP version',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'both Content-Length and Transfer-Encoding',
  HPE_INVALID_CONTENT_LENGTH: 'invalid Content-Length',
  HPE_INVALID_TRANSFER_ENCODING: 'invalid Transfer-Encoding',
  HPE_INVALID_CHUNK_SIZE: 'invalid chunk size',
};

/**
 * Hands the traffic over: for the drain delay the server keeps answering everything while GET /ready
 * says 503 (a balancer's check takes it out of rotation meanwhile), then it stops accepting and
 * waits for the requests in flight, at most the drain timeout.
 */
async function drain(server: Server, services: Services, log: Logger): Promise<void> {
  const { delayMs, timeoutMs } = services.config.drain;
  services.readiness.draining = true;
  if (delayMs > 0) {
    log.info({ delayMs }, 'draining: /ready answers 503, requests are still served');
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  log.info('stopping: no new connections, finishing in-flight requests');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections become idle as their last request finishes: close them as they do.
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  const forced = setTimeout(() => server.closeAllConnections(), timeoutMs);
  server.closeIdleConnections();
  await closed;
  clearInterval(sweeper);
  clearTimeout(forced);
}
