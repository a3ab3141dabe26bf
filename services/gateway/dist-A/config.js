"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.loadGatewayConfig = loadGatewayConfig;
exports.trustProxyTooWide = trustProxyTooWide;
exports.parseTrustProxy = parseTrustProxy;
const node_net_1 = require("node:net");
const common_1 = require("@vanish/common");
const redis_tls_1 = require("./adapters/limiter/redis-tls");
const redis_cluster_1 = require("./adapters/limiter/redis-cluster");
const redis_sentinel_1 = require("./adapters/limiter/redis-sentinel");
const certificate_reloader_1 = require("./tls/certificate-reloader");
const tls_profile_1 = require("./tls/tls-profile");
/** The only place the gateway reads its environment; every problem is reported at once. */
function loadGatewayConfig(env = process.env, logger) {
    const reader = new common_1.EnvReader(env);
    const dataDir = reader.str('DATA_DIR', './data');
    const redisUrl = reader.url('REDIS_URL', undefined, ['redis:', 'rediss:']);
    const redisSentinel = (0, redis_sentinel_1.readRedisSentinel)(reader, redisUrl);
    const redisCluster = (0, redis_cluster_1.readRedisCluster)(reader, { redisUrl, sentinels: redisSentinel !== undefined });
    reader.requireInProduction('REDIS_URL', redisUrl ?? redisSentinel ?? redisCluster, 'in-memory rate limits are per process; replicas would each grant the full limit (or REDIS_SENTINELS, or REDIS_CLUSTER_NODES)');
    const redisTlsCa = (0, common_1.readTlsCa)(reader, 'REDIS_TLS_CA');
    if (redisUrl !== undefined) {
        (0, common_1.refuseInsecureTransportInProduction)(reader, { variable: 'REDIS_URL', risk: (0, redis_tls_1.redisTransportRisk)(redisUrl), optOut: 'REDIS_ALLOW_PLAINTEXT' });
    }
    const windowSeconds = reader.int('RATE_LIMIT_WINDOW_SECONDS', 3600, { min: 1, max: 86_400 });
    const policy = {
        windowSeconds,
        limits: {
            create: reader.int('RATE_LIMIT_CREATE_PER_HOUR', 10, { min: 1, max: 1_000_000 }),
            view: reader.int('RATE_LIMIT_VIEW_PER_HOUR', 50, { min: 1, max: 1_000_000 }),
            stats: reader.int('RATE_LIMIT_STATS_PER_HOUR', 20, { min: 1, max: 1_000_000 }),
        },
    };
    const certFile = reader.str('TLS_CERT_FILE');
    const keyFile = reader.str('TLS_KEY_FILE');
    const tlsProfile = reader.oneOf('TLS_PROFILE', tls_profile_1.TLS_PROFILES, 'intermediate');
    let tls;
    if ((certFile === undefined) !== (keyFile === undefined)) {
        reader.problem('TLS_CERT_FILE and TLS_KEY_FILE: set both or neither');
    }
    else if (certFile !== undefined && keyFile !== undefined) {
        try {
            const pair = (0, certificate_reloader_1.readCertificatePair)(certFile, keyFile, (0, tls_profile_1.tlsProfileOptions)(tlsProfile));
            tls = { certFile, keyFile, cert: pair.cert, key: pair.key, profile: tlsProfile };
        }
        catch (err) {
            reader.problem(`TLS_CERT_FILE/TLS_KEY_FILE: ${err.message}`);
        }
    }
    const trustProxy = parseTrustProxy(reader.str('TRUST_PROXY'));
    reader.refuseInProduction('TRUST_PROXY', trustProxy === true, 'true believes every X-Forwarded-For, so a client picks its own address and escapes the rate limits; name the proxy (its CIDR) or a hop count');
    const requireHttps = reader.bool('REQUIRE_HTTPS', false);
    reader.refuseInProduction('REQUIRE_HTTPS', reader.raw('REQUIRE_HTTPS') !== undefined && !requireHttps, 'false serves passcodes and note links over plain http; TLS ends at the gateway or at a proxy TRUST_PROXY names');
    const host = reader.str('HOST', '0.0.0.0');
    const limiterKey = (0, common_1.loadSecretKey)(reader, 'LIMITER_KEY', dataDir, logger, 'losing it only resets the rate-limit counters');
    const config = {
        port: reader.int('PORT', 8080, { min: 0, max: 65_535 }),
        adminPort: reader.int('ADMIN_PORT', 9080, { min: 0, max: 65_535 }),
        host,
        adminHost: reader.str('ADMIN_HOST', host),
        notesUrl: reader.url('NOTES_URL', 'http://127.0.0.1:8081', ['http:']),
        statsUrl: reader.url('STATS_URL', 'http://127.0.0.1:8082', ['http:']),
        mailerUrl: reader.url('MAILER_URL', 'http://127.0.0.1:8083', ['http:']),
        redisUrl,
        redisSentinel,
        redisCluster,
        redisTlsCa,
        redisCommandTimeoutMs: reader.int('REDIS_COMMAND_TIMEOUT_MS', 200, { min: 10, max: 10_000 }),
        redisRetryIntervalMs: reader.int('REDIS_RETRY_INTERVAL_MS', 1000, { min: 0, max: 60_000 }),
        rateLimitKeyPrefix: reader.str('RATE_LIMIT_KEY_PREFIX', 'vanish:rl'),
        policy,
        limiterKey: limiterKey ?? Buffer.alloc(32),
        trustProxy,
        corsOrigins: parseOrigins(reader, reader.str('CORS_ORIGINS')),
        requireHttps,
        publicBaseUrl: reader.publicBaseUrl(),
        tls,
        upstreamTimeoutMs: reader.int('UPSTREAM_TIMEOUT_MS', 10_000, { min: 100, max: 300_000 }),
        logLevel: reader.oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'], 'info'),
        shutdownGraceMs: reader.int('SHUTDOWN_GRACE_MS', 10_000, { min: 0, max: 600_000 }),
    };
    reader.done();
    const wide = trustProxyTooWide(trustProxy);
    if (wide) {
        logger?.warn('TRUST_PROXY trusts far more than the proxy in front of the gateway: a client behind it can pick the address it is limited by', {
            trustProxy: String(trustProxy), reason: wide, advice: 'name only the proxy\'s own addresses (a narrow CIDR) or a hop count',
        });
    }
    return Object.freeze(config);
}
/** Prefixes at least this wide trust whole networks, not a proxy: IPv4 /8 and wider, IPv6 wider than /32. */
const WIDEST_NARROW_PREFIX = { 4: 9, 6: 32 };
/** express's named ranges: loopback and link-local cannot carry a client from beyond the host or link. */
const WIDE_NAMES = { uniquelocal: 'uniquelocal is 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and fc00::/7' };
/**
 * Why a TRUST_PROXY value trusts networks rather than the proxy in front of the gateway (`true`, a
 * prefix as wide as an IPv4 /8 or wider than an IPv6 /32, uniquelocal), or undefined when it does not.
 */
function trustProxyTooWide(value) {
    if (value === true)
        return 'true trusts every address';
    if (typeof value !== 'string')
        return undefined;
    for (const entry of value.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean)) {
        if (WIDE_NAMES[entry])
            return WIDE_NAMES[entry];
        const [address = '', prefix] = entry.split('/');
        const family = (0, node_net_1.isIP)(address);
        if (family === 0 || prefix === undefined)
            continue;
        let bits = (0, node_net_1.isIP)(prefix) === 4 ? netmaskBits(prefix) : Number(prefix);
        const mapped = family === 6 && address.startsWith('::ffff:') && address.includes('.');
        if (mapped)
            bits -= 96;
        const limit = WIDEST_NARROW_PREFIX[mapped ? 4 : family];
        if (Number.isFinite(bits) && bits < limit)
            return `${entry} is a /${bits}${mapped ? ' (IPv4-mapped)' : ''} network`;
    }
    return undefined;
}
function netmaskBits(mask) {
    return mask.split('.').reduce((bits, octet) => bits + (Number(octet) >>> 0).toString(2).replace(/0/g, '').length, 0);
}
/** `loopback`, `10.0.0.0/8, 127.0.0.1`, a hop count such as `1`, or `true`/`false`, as express takes them. */
function parseTrustProxy(value) {
    if (value === undefined)
        return false;
    const trimmed = value.trim();
    if (/^(false|off|no)$/i.test(trimmed))
        return false;
    if (/^(true|on|yes)$/i.test(trimmed))
        return true;
    if (/^\d+$/.test(trimmed))
        return Number(trimmed);
    return trimmed;
}
function parseOrigins(reader, value) {
    if (value === undefined)
        return [];
    const origins = value.split(',').map((origin) => origin.trim()).filter(Boolean);
    for (const origin of origins) {
        let parsed;
        try {
            parsed = new URL(origin);
        }
        catch {
            parsed = undefined;
        }
        if (!parsed || parsed.origin !== origin)
            reader.problem(`CORS_ORIGINS: "${origin}" is not an origin such as https://example.com`);
    }
    return origins;
}
//# sourceMappingURL=config.js.map