import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { reindex } from '../../loader/index/reindex.js';
import { loadSampleCatalogue } from './catalogue.js';
import { createWorld, PRODUCTION_STORE_WAIT, type TestWorld } from './env.js';
import { loaderDeps, type TestLoaderDeps } from './indexing.js';
import { runProcess } from './processes.js';

/**
 * Stores a fault test may stop, pause and start again: its own redis-server, its own PostgreSQL
 * cluster, and a TCP proxy in front of the shared Elasticsearch node. Never the shared services.
 */

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(ready: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

/** A redis-server of the test's own, without persistence, that can be stopped, paused and started again on its port. */
export class RedisProcess {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  static async start(): Promise<RedisProcess> {
    const redis = new RedisProcess(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it, unless it runs. */
  async start(): Promise<void> {
    if (this.child) return;
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await until(() => accepts(this.port), 'redis-server');
  }

  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    this.child = null;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
}

/** The binaries of the newest PostgreSQL installed. */
function postgresBin(name: string): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return join('/usr/lib/postgresql', versions[0]!, 'bin', name);
}

/**
 * A throwaway PostgreSQL cluster (initdb) on its own port and directory, run as the `postgres` user
 * when the test runs as root (PostgreSQL refuses root). Trust authentication, no fsync.
 */
export class PostgresCluster {
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async create(): Promise<PostgresCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'bookmeta-pg-'));
    const cluster = new PostgresCluster(await freePort(), dir);
    if (process.getuid?.() === 0)
      await chown(
        dir,
        Number((await runProcess('id', ['-u', 'postgres'])).stdout),
        Number((await runProcess('id', ['-g', 'postgres'])).stdout),
      );
    await cluster.run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await cluster.start();
    return cluster;
  }

  /** The URL of a database in this cluster. */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
    await this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-o', options, '-l', join(this.dir, 'log'), '-w', 'start']);
  }

  async stop(): Promise<void> {
    await this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async run(binary: string, args: string[]): Promise<void> {
    const [command, commandArgs] =
      process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', postgresBin(binary), ...args]] : [postgresBin(binary), args];
    const result = await runProcess(command, commandArgs);
    if (result.code !== 0) throw new Error(`${binary} ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  }
}

/**
 * A TCP proxy to an upstream address that can be closed (connections refused), made to stall
 * (connections accepted and never answered), made slow (every answer, or every request, held back a
 * while) and opened again on the same port.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  private delayMs = 0;
  private holdMs = 0;
  private held = 0;

  private constructor(
    readonly port: number,
    private readonly upstream: { host: string; port: number },
  ) {}

  static async start(upstreamUrl: string): Promise<TcpProxy> {
    const url = new URL(upstreamUrl);
    const proxy = new TcpProxy(await freePort(), { host: url.hostname, port: Number(url.port) });
    await proxy.open();
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async open(): Promise<void> {
    this.dropConnections();
    this.stalled = false;
    this.delayMs = 0;
    this.holdMs = 0;
    if (this.server) return;
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.server = server;
  }

  /** Every connection is refused. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.dropConnections();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Connections are accepted and held without an answer, as a node that hangs does. */
  stall(): void {
    this.dropConnections();
    this.stalled = true;
  }

  /** Every answer from upstream reaches the client `ms` later (in order), as from a node that is slow but up. */
  delay(ms: number): void {
    this.delayMs = ms;
  }

  /**
   * Every request reaches upstream `ms` later (in order), even when its client is gone by then: as a
   * request that reached the node carries on after its client died.
   */
  holdRequests(ms: number): void {
    this.holdMs = ms;
  }

  /** Resolves once every held request has reached upstream. */
  async requestsDelivered(): Promise<void> {
    while (this.held > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.stalled) return;
    const upstream = createConnection(this.upstream);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    let heldHere = 0;
    let clientClosed = false;
    client.on('close', () => {
      clientClosed = true;
      if (heldHere === 0) upstream.destroy();
    });
    client.on('data', (chunk: Buffer) => {
      if (this.holdMs === 0) {
        upstream.write(chunk);
        return;
      }
      heldHere += 1;
      this.held += 1;
      setTimeout(() => {
        upstream.write(chunk);
        heldHere -= 1;
        this.held -= 1;
        // Closing at once could abort the request before upstream read it: let it be carried out.
        if (clientClosed && heldHere === 0) setTimeout(() => upstream.destroy(), 1_000);
      }, this.holdMs);
    });
    // Timers of one delay fire in the order they were set, so the answer's bytes keep their order.
    upstream.on('data', (chunk: Buffer) => {
      if (this.delayMs === 0) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), this.delayMs);
    });
  }

  private dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}

/** A test world on stores of its own, at the production wait, with the sample catalogue loaded and indexed. */
export interface PrivateWorld {
  redis: RedisProcess;
  postgres: PostgresCluster;
  elastic: TcpProxy;
  world: TestWorld;
  deps: TestLoaderDeps;
  /** Reopens Elasticsearch's proxy, closes the world and stops the stores. */
  close(): Promise<void>;
}

export async function openPrivateWorld(database: string): Promise<PrivateWorld> {
  const [redis, postgres, elastic] = await Promise.all([
    RedisProcess.start(),
    PostgresCluster.create(),
    TcpProxy.start(process.env.ELASTICSEARCH_URL ?? 'http://127.0.0.1:9200'),
  ]);
  // The production wait: how long clients wait for a store that is away is part of what is tested.
  const world = await createWorld({
    ...PRODUCTION_STORE_WAIT,
    DATABASE_URL: postgres.url(database),
    REDIS_URL: redis.url,
    ELASTICSEARCH_URL: elastic.url,
  });
  const deps = loaderDeps(world);
  await loadSampleCatalogue(world);
  await reindex(deps, 'all', { progress: false });
  return {
    redis,
    postgres,
    elastic,
    world,
    deps,
    async close() {
      await elastic.open();
      await deps.close();
      await world.destroy().catch(() => undefined);
      await Promise.all([redis.stop(), postgres.destroy(), elastic.close()]);
    },
  };
}
