import type { Cluster, Redis } from 'ioredis';
import type { Express, RequestHandler } from 'express';
import type { Dispatcher } from 'undici';
import { createAdminApp, createLogger, createRegistry, Lifecycle, PUBLIC_LISTEN, listen, type Logger, type Registry } from '@vanish/common';
import { FileBytesLimiter } from './adapters/limiter/file-bytes-limiter';
import { MemoryRateLimiter } from './adapters/limiter/memory-rate-limiter';
import { RedisRateLimiter } from './adapters/limiter/redis-rate-limiter';
import { clusterClientOptions } from './adapters/limiter/redis-cluster';
import { redisTlsOptions } from './adapters/limiter/redis-tls';
import { isSentinelWalkWithoutSentinelError, logPrimarySwitches, sentinelClientOptions } from './adapters/limiter/redis-sentinel';
import { guardStreamErrors, isCluster } from './adapters/limiter/redis-stream-guard';
import { batchWritesPerTurn } from './adapters/limiter/redis-turn-batching';
import type { GatewayConfig } from './config';
import type { RateLimiter } from './domain/rate-limiter';
import { createGatewayMetrics, type GatewayMetrics } from './gateway-metrics';
import { createFilesRelay } from './http/files-relay';
import { createGatewayApp } from './http/gateway-app';
import type { UpstreamName } from './http/route-table';
import { createSharedUpstreamRead } from './http/shared-upstream-read';
import { createUpstreamProxy } from './http/upstream-proxy';
import { InProcessDispatcher, type LocalUpstreams } from './http/in-process-dispatcher';
import { LazyAgent } from './http/lazy-agent';
import { CertificateReloader, parseCertificatePair, type SecureContextTarget } from './tls/certificate-reloader';
import { tlsProfileOptions } from './tls/tls-profile';

export interface GatewayOverrides {
  logger?: Logger;
  registry?: Registry;
  /** A limiter to use instead of the one REDIS_URL selects (tests, all-in-one). */
  limiter?: RateLimiter;
  /** Accepted for the common module contract; the gateway publishes and consumes nothing. */
  bus?: unknown;
  /**
   * Upstreams served in this same process (the all-in-one): their requests are handed to the app at
   * that origin with no socket and no second HTTP parse (InProcessDispatcher); the door and the relay's
   * rules are the same code either way. Other origins go over undici's agent.
   */
  localUpstreams?: LocalUpstreams;
}

export interface GatewayService {
  app: Express;
  registry: Registry;
  limiter: RateLimiter;
  metrics: GatewayMetrics;
  start(): Promise<{ port: number; adminPort: number }>;
  stop(): Promise<void>;
  /** With TLS_CERT_FILE/TLS_KEY_FILE, once started: what renews the listener's certificate. */
  readonly certificates: CertificateReloader | undefined;
}

/**
 * The composition root: picks the limiter from config (Redis when REDIS_URL, REDIS_SENTINELS or
 * REDIS_CLUSTER_NODES is set, memory otherwise), builds one keep-alive agent and a proxy per
 * upstream, and owns start and stop.
 */
export async function createGatewayService(config: Readonly<GatewayConfig>, overrides: GatewayOverrides = {}): Promise<GatewayService> {
  const logger = overrides.logger ?? createLogger('gateway', config.logLevel);
  const registry = overrides.registry ?? createRegistry('gateway');
  const lifecycle = new Lifecycle(logger);

  let redis: Redis | Cluster | undefined;
  let limiter: RateLimiter;
  let metrics: GatewayMetrics | undefined;
  if (overrides.limiter) {
    limiter = overrides.limiter;
  } else if (config.redisUrl || config.redisSentinel || config.redisCluster) {
    redis = await createRedisClient(config, logger.child('gateway/redis'));
    const client = redis;
    lifecycle.add('redis', () => client.disconnect());
    limiter = new RedisRateLimiter({
      redis: client,
      policy: config.policy,
      keyPrefix: config.rateLimitKeyPrefix,
      retryIntervalMs: config.redisRetryIntervalMs,
      logger: logger.child('gateway/limiter'),
      onFallback: (action) => metrics?.limiterFallback.inc({ action }),
    });
  } else {
    logger.warn('REDIS_URL is not set: rate limits are kept in this process only (not for production)');
    limiter = new MemoryRateLimiter(config.policy, config.rateLimitKeyPrefix);
  }
  metrics = createGatewayMetrics(registry, () => limiter.isStoreHealthy());
  const gatewayMetrics = metrics;
  lifecycle.add('limiter', () => limiter.stop());

  // Kept-alive upstream connections; idle ones are dropped before the upstreams' own keep-alive
  // timeout (5 s in common's listen) so we never write to a socket they closed. The relay keeps its
  // own deadline up to the answer's headers (UPSTREAM_TIMEOUT_MS); a body that then stalls for as
  // long is cut.
  // In the all-in-one undici is loaded only if a request needs a socket (LazyAgent); the separate gateway
  // loads it at start, as every relayed request uses it.
  const agent = new LazyAgent({
    keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, headersTimeout: 0, bodyTimeout: config.upstreamTimeoutMs,
  });
  lifecycle.add('upstream agent', () => agent.destroy());
  // The all-in-one hands requests to the services' apps in process, the agent only for what needs a socket.
  const dispatcherOver = (socketAgent: LazyAgent, timeoutMs: number): Dispatcher => (overrides.localUpstreams
    ? new InProcessDispatcher(overrides.localUpstreams, socketAgent as unknown as Dispatcher, timeoutMs) as unknown as Dispatcher
    : socketAgent.load());
  const dispatcher = dispatcherOver(agent, config.upstreamTimeoutMs);
  // The reads that change nothing upstream (route-table.ts `repeatableRead`) on connections of their own that
  // carry up to UPSTREAM_PIPELINING at once: notes takes several requests, and the gateway several answers, per
  // socket read (docs/gateway.md, "Reads pipelined"). Kept apart from the other requests' connections, so that a
  // request undici sends again after a broken connection is only ever such a read, and a slow create never holds
  // reads up behind it.
  const readsAgent = config.upstreamPipelining > 1
    ? new LazyAgent({
      keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, headersTimeout: 0, bodyTimeout: config.upstreamTimeoutMs, pipelining: config.upstreamPipelining,
    })
    : undefined;
  if (readsAgent) lifecycle.add('upstream reads agent', () => readsAgent.destroy());
  const readsDispatcher = readsAgent ? dispatcherOver(readsAgent, config.upstreamTimeoutMs) : dispatcher;

  const proxyLogger = logger.child('gateway/proxy');
  const upstreams: Record<UpstreamName, string> = { notes: config.notesUrl, stats: config.statsUrl, mailer: config.mailerUrl };
  const relayOptions = (name: UpstreamName) => ({
    name,
    target: upstreams[name],
    dispatcher,
    timeoutMs: config.upstreamTimeoutMs,
    logger: proxyLogger,
    onUpstreamError: (upstream: string, code: string) => gatewayMetrics.upstreamErrors.inc({ upstream, code }),
    onJoined: (upstream: string, count: number) => gatewayMetrics.sharedReadJoins.inc({ upstream }, count),
  });
  const perUpstream = (relay: (name: UpstreamName) => RequestHandler): Record<UpstreamName, RequestHandler> =>
    Object.fromEntries((Object.keys(upstreams) as UpstreamName[]).map((name) => [name, relay(name)])) as Record<UpstreamName, RequestHandler>;
  const proxies = perUpstream((name) => createUpstreamProxy(relayOptions(name)));
  const readOptions = (name: UpstreamName) => ({ ...relayOptions(name), dispatcher: readsDispatcher, pipelined: readsAgent !== undefined });
  const reads = readsAgent ? perUpstream((name) => createUpstreamProxy(readOptions(name))) : proxies;
  // Files (DECISIONS 14) on connections of their own: no deadline and no body timeout but the relay's
  // idle timer, so a large file on a slow link moves as long as it moves. In the all-in-one they are
  // handed to notes' app in process like every other request (no body timeout there either): no
  // loopback socket, no second and third HTTP parse, no two socket copies of every byte.
  const filesAgent = new LazyAgent({ keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, headersTimeout: 0, bodyTimeout: 0 });
  lifecycle.add('files agent', () => filesAgent.destroy());
  const filesDispatcher = dispatcherOver(filesAgent, 0);
  const fileBytes = redis
    ? FileBytesLimiter.redis(redis, config.fileBytesPerHour, config.rateLimitKeyPrefix)
    : FileBytesLimiter.memory(config.fileBytesPerHour, config.rateLimitKeyPrefix);
  const files = createFilesRelay({
    target: config.notesUrl, dispatcher: filesDispatcher, idleTimeoutMs: config.fileIdleTimeoutMs, bytes: fileBytes,
    limiterKey: config.limiterKey, logger: proxyLogger,
    onUpstreamError: (upstream, code) => gatewayMetrics.upstreamErrors.inc({ upstream, code }),
    onRateLimited: () => gatewayMetrics.rateLimited.inc({ action: 'file_bytes' }),
    onBytes: (direction, bytes) => gatewayMetrics.fileBytes.inc({ direction }, bytes),
  });
  const sharedReads = perUpstream((name) => createSharedUpstreamRead(readOptions(name)));

  const app = createGatewayApp({
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    requireHttps: config.requireHttps,
    publicBaseUrl: config.publicBaseUrl,
    limiterKey: config.limiterKey,
    limiter,
    proxies,
    reads,
    sharedReads,
    files,
    logger: logger.child('gateway/access'),
    registry,
    metrics: gatewayMetrics,
    isDraining: () => lifecycle.isDraining,
  });

  let certificates: CertificateReloader | undefined;
  return {
    app,
    registry,
    limiter,
    metrics: gatewayMetrics,
    get certificates() {
      return certificates;
    },
    async start() {
      if (redis) await waitUntilReady(redis, 2000, logger);
      const admin = await listen(createAdminApp({ registry, checks: [], isDraining: () => lifecycle.isDraining, logger: logger.child('gateway/admin') }), config.adminPort, config.adminHost, undefined, { port: 'ADMIN_PORT', host: 'ADMIN_HOST' });
      lifecycle.add('admin server', () => admin.close());
      const tls = config.tls;
      const profile = tls ? tlsProfileOptions(tls.profile) : undefined;
      const pub = await listen(app, config.port, config.host, tls && profile ? { ...profile, cert: tls.cert, key: tls.key } : undefined, PUBLIC_LISTEN);
      lifecycle.add('public server', () => pub.close());
      // No whole-request deadline on the public listener: a file upload may take longer than any fixed
      // one. The body guard gives other bodies the same 30 s (408), files an idle timeout instead.
      pub.server.requestTimeout = 0;
      if (tls && profile) {
        const reloader = new CertificateReloader({
          certFile: tls.certFile, keyFile: tls.keyFile, profile,
          initial: parseCertificatePair(tls.cert, tls.key, tls),
          target: pub.server as unknown as SecureContextTarget,
          logger: logger.child('gateway/tls'), registry,
        });
        reloader.start();
        certificates = reloader;
        lifecycle.add('certificate reloader', () => reloader.stop());
      }
      logger.info('gateway listening', {
        port: pub.port,
        adminPort: admin.port,
        tls: config.tls ? config.tls.profile : false,
        limiter: redis ? 'redis' : overrides.limiter ? 'injected' : 'memory',
      });
      return { port: pub.port, adminPort: admin.port };
    },
    stop: () => lifecycle.stop(),
  };
}

/**
 * Commands of one event-loop turn share a write (batchWritesPerTurn; a Cluster: auto-pipelining). No offline
 * queue (a command while disconnected fails at once), a short command timeout (a
 * stalled Redis fails fast) and no resending after reconnects: the limiter falls back to memory
 * instead of waiting. Reconnects go on in the background, so Redis is used again when it returns.
 */
async function createRedisClient(config: Readonly<GatewayConfig>, logger: Logger): Promise<Redis | Cluster> {
  // ioredis is loaded only when Redis is configured (about 2 MB of heap the all-in-one, on memory limits, does not use).
  const { Cluster, Redis } = await import('ioredis');
  const connection = {
    commandTimeout: config.redisCommandTimeoutMs,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
    // Connected below, once its streams are guarded (ioredis would open the first one in its constructor).
    lazyConnect: true,
  };
  const common = { ...connection, enableOfflineQueue: false };
  let redis: Redis | Cluster;
  if (config.redisCluster) {
    // A master's failover (the cluster's node timeout plus an election) is answered from memory like
    // any Redis outage: commands for the lost master's slots fail at once instead of being retried.
    redis = new Cluster(config.redisCluster.nodes, { ...clusterClientOptions(config.redisCluster, connection, config.redisTlsCa), lazyConnect: true });
  } else if (config.redisSentinel) {
    // The failover window (Sentinels' down-after plus the switch, a few seconds) is answered from
    // memory like any Redis outage: commands fail fast, the insurance limiter counts meanwhile.
    const sentinelClient = new Redis({ ...common, ...sentinelClientOptions(config.redisSentinel, config.redisTlsCa) });
    logPrimarySwitches(sentinelClient, logger);
    redis = sentinelClient;
  } else {
    const url = config.redisUrl!;
    const tls = redisTlsOptions(url, config.redisTlsCa);
    redis = new Redis(url, { ...(tls ? { tls } : {}), ...common });
  }
  // One connection (a single Redis or a Sentinel's primary): a turn's commands in one write. A Cluster
  // spreads them over its nodes' connections and keeps auto-pipelining (clusterClientOptions).
  if (!isCluster(redis)) batchWritesPerTurn(redis);
  guardStreamErrors(redis);
  // Each distinct error is logged once per outage: a reconnect loop repeats the same one, and a second
  // cause (a Cluster node lost while another was already failing) is not hidden behind the first.
  const reported = new Set<string>();
  const report = (message: string, err: Error, fields: Record<string, string> = {}): void => {
    if (reported.has(err.message)) return;
    reported.add(err.message);
    logger.warn(message, { err: err.message, ...fields });
  };
  const recovered = (): void => {
    if (reported.size > 0) logger.info('redis connection ready again');
    reported.clear();
  };
  redis.on('error', (err: Error) => {
    if (config.redisSentinel && isSentinelWalkWithoutSentinelError(err)) {
      logger.debug('redis: the Sentinels named a primary that did not answer; asking them again', { err: err.message });
      return;
    }
    report('redis connection error', err);
  });
  redis.on('ready', recovered);
  if (isCluster(redis)) {
    // A Cluster stays ready while one master is lost: its nodes' connections report on their own.
    redis.on('node error', (err: Error, node: string) => report('redis cluster node connection error', err, { node }));
    redis.on('+node', (node: Redis) => node.on('ready', recovered));
  }
  // A failed first connection is reported through 'error' like any other; reconnects go on.
  redis.connect().catch(() => undefined);
  return redis;
}

function waitUntilReady(redis: Redis | Cluster, timeoutMs: number, logger: Logger): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      logger.warn('redis not ready at start: limits are answered from memory until it is', { timeoutMs });
      resolve();
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}
