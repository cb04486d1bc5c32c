/**
 * How an index is spread over a cluster: its primary shards, and the copies of each shard on other
 * nodes (one replica lets the index keep answering when a node stops). A setting of the loader,
 * not of the mapping: it depends on the cluster, not on the documents.
 */
export interface IndexShape {
  shards: number;
  replicas: number;
}

/**
 * What a client connection may hold before the server gives up on it: a slow or silent client
 * (slow loris) must not keep a connection, and a few thousand of them the server's sockets.
 */
export interface ConnectionLimits {
  /** The request line and headers must have arrived within this (HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** The whole request, headers and body, must have arrived within this (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** A body may pause this long between bytes (BODY_IDLE_TIMEOUT_MS). */
  bodyIdleTimeoutMs: number;
  /** Open connections from one client address at most; 0: no cap (MAX_CONNECTIONS_PER_CLIENT). Trusted proxies have none. */
  maxConnectionsPerClient: number;
  /** Open connections in all at most; 0: no cap (MAX_CONNECTIONS). Behind a proxy every client is one address. */
  maxConnections: number;
}

/**
 * How a server told to stop (SIGTERM) hands its traffic over: for `delayMs` it keeps serving while
 * GET /ready answers 503, so that a load balancer checking it takes it out of rotation before it
 * stops accepting; then it waits at most `timeoutMs` for the requests in flight.
 */
export interface DrainTimes {
  /** Serving on while /ready says 503 (DRAIN_DELAY_MS): longer than the balancer takes to notice. */
  delayMs: number;
  /** The longest the requests in flight are waited for once the server stops accepting (DRAIN_TIMEOUT_MS). */
  timeoutMs: number;
}

/** Every setting comes from the environment; the defaults suit a developer machine. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string;
  /** Prepended to every Redis key, so several deployments (or test files) can share one server. */
  redisPrefix: string;
  /** One node's URL, or several comma-separated (a cluster). */
  elasticsearchUrl: string;
  /** Prepended to every Elasticsearch index and alias name. */
  indexPrefix: string;
  /** Primary shards and replicas of each index the loader builds (INDEX_SHARDS, INDEX_REPLICAS). */
  indexShape: IndexShape;
  rateLimitMax: number;
  rateLimitWindowS: number;
  /** CORS preflights answered per client address per rate-limit window (they carry no key). */
  preflightRateLimitMax: number;
  /** Lifetime of the point-lookup cache (the contract says 24 hours). */
  pointCacheTtlS: number;
  /** Lifetime of the short cache used by search, match, recommend and changes. */
  shortCacheTtlS: number;
  /**
   * Age past which a kept summary (a subject's page, trending) is recomputed in the background while
   * still served (SUMMARY_REFRESH_S); 0 keeps none, every request computes its answer.
   */
  summaryRefreshS: number;
  /** How long a request waits for PostgreSQL or Elasticsearch before answering 503, and twice its wait for Redis (STORE_WAIT_MS). */
  storeWaitMs: number;
  /** Limits on what one client connection may hold (see src/connectionLimits.ts). */
  connectionLimits: ConnectionLimits;
  /** How a stopping server lets go of its traffic (see drain in src/server.ts). */
  drain: DrainTimes;
  /** Addresses of the proxies in front (TRUSTED_PROXIES): only their X-Forwarded-For is believed. */
  trustedProxies: string[];
  /**
   * How long after PostgreSQL last confirmed a key the key keeps working while PostgreSQL is away
   * (KEY_OUTAGE_GRACE_S): a revocation made meanwhile cannot be read, so the window is bounded.
   */
  keyOutageGraceS: number;
  /** The base URL clients reach the service at (PUBLIC_URL), for URLs the service writes; null: the request's Host. */
  publicUrl: string | null;
  meteringEnabled: boolean;
  /** Records held in memory while PostgreSQL is unreachable; past this the oldest are dropped. */
  meteringBufferMax: number;
  logLevel: string;
  /**
   * Origins whose browser pages may call /mcp besides loopback ones (MCP_ALLOWED_ORIGINS,
   * comma-separated, e.g. `https://app.example.com`; `*` for any): refused otherwise, against DNS rebinding.
   */
  mcpAllowedOrigins: string[];
  /** Port of the API's Prometheus endpoint (METRICS_PORT; 0 picks a free one); null, when unset: no metrics. */
  metricsPort: number | null;
  /** Port of `bookmeta sync --follow`'s Prometheus endpoint (SYNC_METRICS_PORT); null, when unset: none. */
  syncMetricsPort: number | null;
  /** Address both metrics endpoints listen on (METRICS_HOST): loopback unless an operator opens it. */
  metricsHost: string;
}

/** SUMMARY_REFRESH_S unless set: the ten minutes the API's documentation promises by default. */
export const SUMMARY_REFRESH_DEFAULT_S = 600;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** A comma-separated list; empty entries are ignored. */
const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** An http(s) base URL without its trailing slash, or null when unset. */
function publicUrl(raw: string | undefined): string | null {
  if (!raw) return null;
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash)
    throw new Error(`PUBLIC_URL must be an http(s) URL without query or fragment, got "${raw}"`);
  return url.href.replace(/\/$/, '');
}

/** An optional port: null when the variable is unset or empty. */
function optionalPort(env: NodeJS.ProcessEnv, name: string): number | null {
  if (env[name] === undefined || env[name] === '') return null;
  const port = integer(env, name, 0);
  if (port > 65_535) throw new Error(`${name} must be a port number (0-65535), got "${env[name]}"`);
  return port;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/bookmeta',
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    redisPrefix: env.REDIS_PREFIX ?? 'bookmeta:',
    elasticsearchUrl: env.ELASTICSEARCH_URL || 'http://127.0.0.1:9200',
    indexPrefix: env.INDEX_PREFIX ?? 'bookmeta-',
    indexShape: { shards: Math.max(1, integer(env, 'INDEX_SHARDS', 1)), replicas: integer(env, 'INDEX_REPLICAS', 0) },
    rateLimitMax: integer(env, 'RATE_LIMIT_MAX', 120),
    rateLimitWindowS: integer(env, 'RATE_LIMIT_WINDOW_S', 60),
    preflightRateLimitMax: integer(env, 'PREFLIGHT_RATE_LIMIT_MAX', 1200),
    pointCacheTtlS: integer(env, 'POINT_CACHE_TTL_S', 24 * 60 * 60),
    shortCacheTtlS: integer(env, 'SHORT_CACHE_TTL_S', 30),
    summaryRefreshS: integer(env, 'SUMMARY_REFRESH_S', SUMMARY_REFRESH_DEFAULT_S),
    storeWaitMs: Math.max(1, integer(env, 'STORE_WAIT_MS', 500)),
    connectionLimits: connectionLimits(env),
    drain: { delayMs: integer(env, 'DRAIN_DELAY_MS', 0), timeoutMs: integer(env, 'DRAIN_TIMEOUT_MS', 10_000) },
    trustedProxies: list(env.TRUSTED_PROXIES),
    keyOutageGraceS: integer(env, 'KEY_OUTAGE_GRACE_S', 60),
    publicUrl: publicUrl(env.PUBLIC_URL),
    meteringEnabled: env.METERING !== 'off',
    meteringBufferMax: integer(env, 'METERING_BUFFER_MAX', 100_000),
    logLevel: env.LOG_LEVEL || 'info',
    mcpAllowedOrigins: list(env.MCP_ALLOWED_ORIGINS),
    metricsPort: optionalPort(env, 'METRICS_PORT'),
    syncMetricsPort: optionalPort(env, 'SYNC_METRICS_PORT'),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
  };
}

function connectionLimits(env: NodeJS.ProcessEnv): ConnectionLimits {
  const limits = {
    headersTimeoutMs: Math.max(1, integer(env, 'HEADERS_TIMEOUT_MS', 10_000)),
    requestTimeoutMs: Math.max(1, integer(env, 'REQUEST_TIMEOUT_MS', 30_000)),
    bodyIdleTimeoutMs: Math.max(1, integer(env, 'BODY_IDLE_TIMEOUT_MS', 5_000)),
    maxConnectionsPerClient: integer(env, 'MAX_CONNECTIONS_PER_CLIENT', 1024),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 10_000),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new Error('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS: the headers are part of the request');
  return limits;
}
