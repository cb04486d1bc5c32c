import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectPath } from '../../src/paths.js';

/**
 * HAProxy from Debian's package, run with the repository's configuration (scripts/ops/haproxy.cfg)
 * in front of API instances on this machine, and what its statistics say of each instance.
 */

export interface Balancer {
  url: string;
  /** Each server of the `api` backend as the statistics page shows it now. */
  servers(): Promise<ServerStats[]>;
  /** The frontend's answers by class, as the balancer counted them. */
  frontend(): Promise<ServerStats>;
  stop(): Promise<void>;
}

/** One row of HAProxy's CSV statistics, the fields read here. */
export interface ServerStats {
  name: string;
  /** `UP`, `DOWN`, `UP 1/2` (going down), `DOWN 1/2` (coming up), `no check`, ... */
  status: string;
  /** Requests sent again to the same server after a failed connection, and redispatched to another. */
  retries: number;
  redispatches: number;
  /** Connection and response errors the balancer saw from this server. */
  connectionErrors: number;
  responseErrors: number;
  /** Answers with a 5xx status (a balancer's own 502/503 on the frontend). */
  responses5xx: number;
  /** Times the health check took it from UP to DOWN. */
  checkDowns: number;
}

// Debian installs it outside a user's PATH.
const BINARY = process.env.HAPROXY ?? (existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy');

/** Starts HAProxy on `port` (statistics on `statsPort`) in front of the instances at `servers` (host:port, two). */
export async function startBalancer(options: { port: number; statsPort: number; servers: [string, string] }): Promise<Balancer> {
  const env = {
    ...process.env,
    HAPROXY_BIND: `127.0.0.1:${options.port}`,
    HAPROXY_STATS: `127.0.0.1:${options.statsPort}`,
    API_1: options.servers[0],
    API_2: options.servers[1],
  };
  // -db: in the foreground, so that it is this child and ends with it.
  const child = spawn(BINARY, ['-db', '-f', projectPath('scripts', 'ops', 'haproxy.cfg')], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new Error(`${BINARY} could not be started (apt-get install haproxy): ${error.message}`)));
  });
  const statsUrl = `http://127.0.0.1:${options.statsPort}/stats;csv`;
  const rows = async (): Promise<ServerStats[]> => {
    const lines = (await (await fetch(statsUrl)).text()).trim().split('\n');
    const header = lines[0]!.replace(/^# /, '').split(',');
    const field = (cells: string[], name: string) => cells[header.indexOf(name)] ?? '';
    const count = (cells: string[], name: string) => Number(field(cells, name) || 0);
    return lines.slice(1).map((line) => {
      const cells = line.split(',');
      return {
        name: `${field(cells, 'pxname')}/${field(cells, 'svname')}`,
        status: field(cells, 'status'),
        retries: count(cells, 'wretr'),
        redispatches: count(cells, 'wredis'),
        connectionErrors: count(cells, 'econ'),
        responseErrors: count(cells, 'eresp'),
        responses5xx: count(cells, 'hrsp_5xx'),
        checkDowns: count(cells, 'chkdown'),
      };
    });
  };
  // Ready once its statistics answer; a configuration it refuses ends it first.
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}: ${stderr}`);
    const answered = await rows().then(
      () => true,
      () => false,
    );
    if (answered) break;
    await sleep(50);
  }
  return {
    url: `http://127.0.0.1:${options.port}`,
    servers: async () => (await rows()).filter((row) => row.name === 'api/api1' || row.name === 'api/api2'),
    frontend: async () => (await rows()).find((row) => row.name === 'api/FRONTEND')!,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Waits until the balancer's check shows `server` (api1, api2) in `state` (UP, DOWN). */
export async function untilServer(balancer: Balancer, server: string, state: 'UP' | 'DOWN', timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const row = (await balancer.servers()).find((candidate) => candidate.name === `api/${server}`);
    if (row?.status === state) return;
    if (performance.now() > deadline) throw new Error(`${server} not ${state} within ${timeoutMs} ms (${row?.status})`);
    await sleep(100);
  }
}

/** An API instance an operator can stop (SIGTERM, until it exits) and start again on its port. */
export interface Instance {
  /** Its name in the balancer (api1, api2). */
  name: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * One rolling restart as docs/operations.md tells an operator: each instance in turn is sent SIGTERM
 * and waited for, started again, and the next one only once the balancer has it back in rotation.
 */
export async function rollingRestart(
  balancer: Balancer,
  instances: readonly Instance[],
  say: (text: string) => void = () => undefined,
): Promise<void> {
  for (const instance of instances) {
    say(`${instance.name}: SIGTERM`);
    await instance.stop();
    say(`${instance.name}: stopped, starting`);
    await instance.start();
    await untilServer(balancer, instance.name, 'UP');
    say(`${instance.name}: back in rotation`);
  }
}
