import { type Env, type Logger, type LogLevel } from '@vanish/common';
import { type RedisClusterSettings } from './adapters/limiter/redis-cluster';
import { type RedisSentinelSettings } from './adapters/limiter/redis-sentinel';
import type { LimitPolicy } from './domain/limit-policy';
import { type TlsProfileName } from './tls/tls-profile';
export interface GatewayConfig {
    port: number;
    adminPort: number;
    host: string;
    /** ADMIN_HOST: where /healthz, /readyz and /metrics listen; HOST when unset. */
    adminHost: string;
    notesUrl: string;
    statsUrl: string;
    mailerUrl: string;
    /** Unset: in-memory limits (refused in production). */
    redisUrl: string | undefined;
    /** REDIS_SENTINELS + REDIS_SENTINEL_NAME: Redis behind Sentinels (instead of REDIS_URL). */
    redisSentinel: RedisSentinelSettings | undefined;
    /** REDIS_CLUSTER_NODES: a Redis Cluster (instead of REDIS_URL or REDIS_SENTINELS). */
    redisCluster: RedisClusterSettings | undefined;
    /** REDIS_TLS_CA(_FILE): CA bundle for rediss://; unset: Node's public roots. */
    redisTlsCa: string | undefined;
    redisCommandTimeoutMs: number;
    /** After a Redis failure, limits are answered from memory for this long before Redis is tried again. */
    redisRetryIntervalMs: number;
    rateLimitKeyPrefix: string;
    policy: LimitPolicy;
    /** The secret of the keyed hash that turns client addresses into limiter keys. */
    limiterKey: Buffer;
    /** express's `trust proxy` value; false when unset. */
    trustProxy: boolean | number | string;
    corsOrigins: readonly string[];
    requireHttps: boolean;
    /** Origin used for HTTPS redirects of web pages (else the request's Host). */
    publicBaseUrl: string | undefined;
    /**
     * TLS_CERT_FILE/TLS_KEY_FILE: the gateway's own HTTPS listener, with the pair read and checked at
     * start and renewed live from the same files (tls/certificate-reloader.ts); TLS_PROFILE its options.
     */
    tls: {
        certFile: string;
        keyFile: string;
        cert: Buffer;
        key: Buffer;
        profile: TlsProfileName;
    } | undefined;
    upstreamTimeoutMs: number;
    logLevel: LogLevel;
    shutdownGraceMs: number;
}
/** The only place the gateway reads its environment; every problem is reported at once. */
export declare function loadGatewayConfig(env?: Env, logger?: Logger): Readonly<GatewayConfig>;
/**
 * Why a TRUST_PROXY value trusts networks rather than the proxy in front of the gateway (`true`, a
 * prefix as wide as an IPv4 /8 or wider than an IPv6 /32, uniquelocal), or undefined when it does not.
 */
export declare function trustProxyTooWide(value: boolean | number | string): string | undefined;
/** `loopback`, `10.0.0.0/8, 127.0.0.1`, a hop count such as `1`, or `true`/`false`, as express takes them. */
export declare function parseTrustProxy(value: string | undefined): boolean | number | string;
