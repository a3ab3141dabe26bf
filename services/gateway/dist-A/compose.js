"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.createGatewayService = createGatewayService;
const ioredis_1 = require("ioredis");
const undici_1 = require("undici");
const common_1 = require("@vanish/common");
const memory_rate_limiter_1 = require("./adapters/limiter/memory-rate-limiter");
const redis_rate_limiter_1 = require("./adapters/limiter/redis-rate-limiter");
const redis_cluster_1 = require("./adapters/limiter/redis-cluster");
const redis_tls_1 = require("./adapters/limiter/redis-tls");
const redis_sentinel_1 = require("./adapters/limiter/redis-sentinel");
const redis_stream_guard_1 = require("./adapters/limiter/redis-stream-guard");
const gateway_metrics_1 = require("./gateway-metrics");
const gateway_app_1 = require("./http/gateway-app");
const shared_upstream_read_1 = require("./http/shared-upstream-read");
const upstream_proxy_1 = require("./http/upstream-proxy");
const certificate_reloader_1 = require("./tls/certificate-reloader");
const tls_profile_1 = require("./tls/tls-profile");
/**
 * The composition root: picks the limiter from config (Redis when REDIS_URL, REDIS_SENTINELS or
 * REDIS_CLUSTER_NODES is set, memory otherwise), builds one keep-alive agent and a proxy per
 * upstream, and owns start and stop.
 */
async function createGatewayService(config, overrides = {}) {
    const logger = overrides.logger ?? (0, common_1.createLogger)('gateway', config.logLevel);
    const registry = overrides.registry ?? (0, common_1.createRegistry)('gateway');
    const lifecycle = new common_1.Lifecycle(logger);
    let redis;
    let limiter;
    let metrics;
    if (overrides.limiter) {
        limiter = overrides.limiter;
    }
    else if (config.redisUrl || config.redisSentinel || config.redisCluster) {
        redis = createRedisClient(config, logger.child('gateway/redis'));
        const client = redis;
        lifecycle.add('redis', () => client.disconnect());
        limiter = new redis_rate_limiter_1.RedisRateLimiter({
            redis: client,
            policy: config.policy,
            keyPrefix: config.rateLimitKeyPrefix,
            retryIntervalMs: config.redisRetryIntervalMs,
            logger: logger.child('gateway/limiter'),
            onFallback: (action) => metrics?.limiterFallback.inc({ action }),
        });
    }
    else {
        logger.warn('REDIS_URL is not set: rate limits are kept in this process only (not for production)');
        limiter = new memory_rate_limiter_1.MemoryRateLimiter(config.policy, config.rateLimitKeyPrefix);
    }
    metrics = (0, gateway_metrics_1.createGatewayMetrics)(registry, () => limiter.isStoreHealthy());
    const gatewayMetrics = metrics;
    lifecycle.add('limiter', () => limiter.stop());
    // Kept-alive upstream connections; idle ones are dropped before the upstreams' own keep-alive
    // timeout (5 s in common's listen) so we never write to a socket they closed. The relay keeps its
    // own deadline up to the answer's headers (UPSTREAM_TIMEOUT_MS); a body that then stalls for as
    // long is cut.
    const agent = new undici_1.Agent({
        keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, headersTimeout: 0, bodyTimeout: config.upstreamTimeoutMs,
    });
    lifecycle.add('upstream agent', () => agent.destroy());
    const proxyLogger = logger.child('gateway/proxy');
    const upstreams = { notes: config.notesUrl, stats: config.statsUrl, mailer: config.mailerUrl };
    const relayOptions = (name) => ({
        name,
        target: upstreams[name],
        dispatcher: agent,
        timeoutMs: config.upstreamTimeoutMs,
        logger: proxyLogger,
        onUpstreamError: (upstream, code) => gatewayMetrics.upstreamErrors.inc({ upstream, code }),
        onJoined: (upstream) => gatewayMetrics.sharedReadJoins.inc({ upstream }),
    });
    const perUpstream = (relay) => Object.fromEntries(Object.keys(upstreams).map((name) => [name, relay(name)]));
    const proxies = perUpstream((name) => (0, upstream_proxy_1.createUpstreamProxy)(relayOptions(name)));
    const sharedReads = perUpstream((name) => (0, shared_upstream_read_1.createSharedUpstreamRead)(relayOptions(name)));
    const app = (0, gateway_app_1.createGatewayApp)({
        trustProxy: config.trustProxy,
        corsOrigins: config.corsOrigins,
        requireHttps: config.requireHttps,
        publicBaseUrl: config.publicBaseUrl,
        limiterKey: config.limiterKey,
        limiter,
        proxies,
        sharedReads,
        logger: logger.child('gateway/access'),
        registry,
        metrics: gatewayMetrics,
        isDraining: () => lifecycle.isDraining,
    });
    let certificates;
    return {
        app,
        registry,
        limiter,
        metrics: gatewayMetrics,
        get certificates() {
            return certificates;
        },
        async start() {
            if (redis)
                await waitUntilReady(redis, 2000, logger);
            const admin = await (0, common_1.listen)((0, common_1.createAdminApp)({ registry, checks: [], isDraining: () => lifecycle.isDraining, logger: logger.child('gateway/admin') }), config.adminPort, config.adminHost);
            lifecycle.add('admin server', () => admin.close());
            const tls = config.tls;
            const profile = tls ? (0, tls_profile_1.tlsProfileOptions)(tls.profile) : undefined;
            const pub = await (0, common_1.listen)(app, config.port, config.host, tls && profile ? { ...profile, cert: tls.cert, key: tls.key } : undefined);
            lifecycle.add('public server', () => pub.close());
            if (tls && profile) {
                const reloader = new certificate_reloader_1.CertificateReloader({
                    certFile: tls.certFile, keyFile: tls.keyFile, profile,
                    initial: (0, certificate_reloader_1.parseCertificatePair)(tls.cert, tls.key, tls),
                    target: pub.server,
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
 * Auto-pipelining (commands of one tick share a write: fewer syscalls under load). No offline
 * queue (a command while disconnected fails at once), a short command timeout (a
 * stalled Redis fails fast) and no resending after reconnects: the limiter falls back to memory
 * instead of waiting. Reconnects go on in the background, so Redis is used again when it returns.
 */
function createRedisClient(config, logger) {
    const connection = {
        commandTimeout: config.redisCommandTimeoutMs,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        autoResendUnfulfilledCommands: false,
        retryStrategy: (times) => Math.min(100 * times, 1000),
        // Connected below, once its streams are guarded (ioredis would open the first one in its constructor).
        lazyConnect: true,
    };
    const common = { ...connection, enableOfflineQueue: false, enableAutoPipelining: true };
    let redis;
    if (config.redisCluster) {
        // A master's failover (the cluster's node timeout plus an election) is answered from memory like
        // any Redis outage: commands for the lost master's slots fail at once instead of being retried.
        redis = new ioredis_1.Cluster(config.redisCluster.nodes, { ...(0, redis_cluster_1.clusterClientOptions)(config.redisCluster, connection, config.redisTlsCa), lazyConnect: true });
    }
    else if (config.redisSentinel) {
        // The failover window (Sentinels' down-after plus the switch, a few seconds) is answered from
        // memory like any Redis outage: commands fail fast, the insurance limiter counts meanwhile.
        redis = new ioredis_1.Redis({ ...common, ...(0, redis_sentinel_1.sentinelClientOptions)(config.redisSentinel, config.redisTlsCa) });
    }
    else {
        const url = config.redisUrl;
        const tls = (0, redis_tls_1.redisTlsOptions)(url, config.redisTlsCa);
        redis = new ioredis_1.Redis(url, { ...(tls ? { tls } : {}), ...common });
    }
    (0, redis_stream_guard_1.guardStreamErrors)(redis);
    // Each distinct error is logged once per outage: a reconnect loop repeats the same one, and a second
    // cause (a Cluster node lost while another was already failing) is not hidden behind the first.
    const reported = new Set();
    const report = (message, err, fields = {}) => {
        if (reported.has(err.message))
            return;
        reported.add(err.message);
        logger.warn(message, { err: err.message, ...fields });
    };
    const recovered = () => {
        if (reported.size > 0)
            logger.info('redis connection ready again');
        reported.clear();
    };
    redis.on('error', (err) => report('redis connection error', err));
    redis.on('ready', recovered);
    if (redis instanceof ioredis_1.Cluster) {
        // A Cluster stays ready while one master is lost: its nodes' connections report on their own.
        redis.on('node error', (err, node) => report('redis cluster node connection error', err, { node }));
        redis.on('+node', (node) => node.on('ready', recovered));
    }
    // A failed first connection is reported through 'error' like any other; reconnects go on.
    redis.connect().catch(() => undefined);
    return redis;
}
function waitUntilReady(redis, timeoutMs, logger) {
    if (redis.status === 'ready')
        return Promise.resolve();
    return new Promise((resolve) => {
        const timer = setTimeout(() => {
            redis.off('ready', onReady);
            logger.warn('redis not ready at start: limits are answered from memory until it is', { timeoutMs });
            resolve();
        }, timeoutMs);
        const onReady = () => {
            clearTimeout(timer);
            resolve();
        };
        redis.once('ready', onReady);
    });
}
//# sourceMappingURL=compose.js.map