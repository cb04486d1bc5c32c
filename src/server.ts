import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { createApp } from './http/app.js';
import type { Logger } from './log.js';
import { buildServices, closeServices } from './services/build.js';
import type { Services } from './services/context.js';
import { ensureDatabase, migrate } from './stores/postgres/migrate.js';

export interface RunningServer {
  url: string;
  services: Services;
  /** Stops accepting, lets in-flight requests finish, flushes usage, closes connections. */
  stop(): Promise<void>;
}

const DRAIN_MS = 10_000;

/** Migrates, then serves the API on config.host:config.port (port 0 picks a free one). */
export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  await ensureDatabase(config.databaseUrl);
  const services = await buildServices(config, log);
  const applied = await migrate(services.db);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  const app = createApp(services);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
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
    stop: () => (stopping ??= drain(server, services, log)),
  };
}

async function drain(server: Server, services: Services, log: Logger): Promise<void> {
  log.info('stopping: no new connections, finishing in-flight requests');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections become idle as their last request finishes: close them as they do.
  const sweeper = setInterval(() => server.closeIdleConnections(), 50);
  const forced = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
  server.closeIdleConnections();
  await closed;
  clearInterval(sweeper);
  clearTimeout(forced);
  await closeServices(services);
  log.info('stopped');
  log.flush();
}
