import { isIP } from 'node:net';
import { EnvReader, loadSecretKey, readTlsCa, refuseInsecureTransportInProduction, type Env, type Logger, type LogLevel } from '@vanish/common';
import { redisTransportRisk } from './adapters/limiter/redis-tls';
import { readRedisCluster, type RedisClusterSettings } from './adapters/limiter/redis-cluster';
import { readRedisSentinel, type RedisSentinelSettings } from './adapters/limiter/redis-sentinel';
import type { LimitPolicy } from './domain/limit-policy';
import { readCertificatePair } from './tls/certificate-reloader';
import { TLS_PROFILES, tlsProfileOptions, type TlsProfileName } from './tls/tls-profile';

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
  tls: { certFile: string; keyFile: string; cert: Buffer; key: Buffer; profile: TlsProfileName } | undefined;
  upstreamTimeoutMs: number;
  /**
   * UPSTREAM_PIPELINING: how many reads the gateway may send on one upstream connection before the first is
   * answered (HTTP/1.1 pipelining, only for the routes whose GET changes nothing: route-table.ts `repeatableRead`).
   * 1: none; every request waits for its connection's previous answer.
   */
  upstreamPipelining: number;
  /** DECISIONS 14: FILE_BYTES_PER_HOUR, upload bytes per client address per hour (Redis, like the other limits). */
  fileBytesPerHour: number;
  /** FILE_IDLE_TIMEOUT_SECONDS: a file transfer that moves no byte for this long is cut (never a total timeout). */
  fileIdleTimeoutMs: number;
  logLevel: LogLevel;
  shutdownGraceMs: number;
}

/** The only place the gateway reads its environment; every problem is reported at once. */
export function loadGatewayConfig(env: Env = process.env, logger?: Logger): Readonly<GatewayConfig> {
  const reader = new EnvReader(env);
  const dataDir = reader.str('DATA_DIR', './data');
  const redisUrl = reader.url('REDIS_URL', undefined, ['redis:', 'rediss:']);
  const redisSentinel = readRedisSentinel(reader, redisUrl);
  const redisCluster = readRedisCluster(reader, { redisUrl, sentinels: redisSentinel !== undefined });
  reader.requireInProduction('REDIS_URL', redisUrl ?? redisSentinel ?? redisCluster,
    'in-memory rate limits are per process; replicas would each grant the full limit (or REDIS_SENTINELS, or REDIS_CLUSTER_NODES)');
  const redisTlsCa = readTlsCa(reader, 'REDIS_TLS_CA');
  if (redisUrl !== undefined) {
    refuseInsecureTransportInProduction(reader, { variable: 'REDIS_URL', risk: redisTransportRisk(redisUrl), optOut: 'REDIS_ALLOW_PLAINTEXT' });
  }

  const windowSeconds = reader.int('RATE_LIMIT_WINDOW_SECONDS', 3600, { min: 1, max: 86_400 });
  const policy: LimitPolicy = {
    windowSeconds,
    limits: {
      create: reader.int('RATE_LIMIT_CREATE_PER_HOUR', 10, { min: 1, max: 1_000_000 }),
      view: reader.int('RATE_LIMIT_VIEW_PER_HOUR', 50, { min: 1, max: 1_000_000 }),
      stats: reader.int('RATE_LIMIT_STATS_PER_HOUR', 20, { min: 1, max: 1_000_000 }),
    },
  };

  const certFile = reader.str('TLS_CERT_FILE');
  const keyFile = reader.str('TLS_KEY_FILE');
  const tlsProfile = reader.oneOf<TlsProfileName>('TLS_PROFILE', TLS_PROFILES, 'intermediate');
  let tls: GatewayConfig['tls'];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    reader.problem('TLS_CERT_FILE and TLS_KEY_FILE: set both or neither');
  } else if (certFile !== undefined && keyFile !== undefined) {
    try {
      const pair = readCertificatePair(certFile, keyFile, tlsProfileOptions(tlsProfile));
      tls = { certFile, keyFile, cert: pair.cert, key: pair.key, profile: tlsProfile };
    } catch (err) {
      reader.problem(`TLS_CERT_FILE/TLS_KEY_FILE: ${(err as Error).message}`);
    }
  }

  const trustProxy = parseTrustProxy(reader.str('TRUST_PROXY'));
  reader.refuseInProduction('TRUST_PROXY', trustProxy === true,
    'true believes every X-Forwarded-For, so a client picks its own address and escapes the rate limits; name the proxy (its CIDR) or a hop count');
  const requireHttps = reader.bool('REQUIRE_HTTPS', false);
  reader.refuseInProduction('REQUIRE_HTTPS', reader.raw('REQUIRE_HTTPS') !== undefined && !requireHttps,
    'false serves passcodes and note links over plain http; TLS ends at the gateway or at a proxy TRUST_PROXY names');
  const host = reader.str('HOST', '0.0.0.0');

  const limiterKey = loadSecretKey(reader, 'LIMITER_KEY', dataDir, logger, 'losing it only resets the rate-limit counters', { regenerable: true });

  const config: GatewayConfig = {
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
    upstreamPipelining: reader.int('UPSTREAM_PIPELINING', 10, { min: 1, max: 100 }),
    fileBytesPerHour: reader.int('FILE_BYTES_PER_HOUR', 5 * 1024 ** 3, { min: 1, max: 2 ** 50 }),
    fileIdleTimeoutMs: reader.int('FILE_IDLE_TIMEOUT_SECONDS', 60, { min: 1, max: 3600 }) * 1000,
    logLevel: reader.oneOf<LogLevel>('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'], 'info'),
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
const WIDEST_NARROW_PREFIX = { 4: 9, 6: 32 } as const;
/** express's named ranges: loopback and link-local cannot carry a client from beyond the host or link. */
const WIDE_NAMES: Readonly<Record<string, string>> = { uniquelocal: 'uniquelocal is 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and fc00::/7' };

/**
 * Why a TRUST_PROXY value trusts networks rather than the proxy in front of the gateway (`true`, a
 * prefix as wide as an IPv4 /8 or wider than an IPv6 /32, uniquelocal), or undefined when it does not.
 */
export function trustProxyTooWide(value: boolean | number | string): string | undefined {
  if (value === true) return 'true trusts every address';
  if (typeof value !== 'string') return undefined;
  for (const entry of value.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean)) {
    if (WIDE_NAMES[entry]) return WIDE_NAMES[entry];
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || prefix === undefined) continue;
    let bits = isIP(prefix) === 4 ? netmaskBits(prefix) : Number(prefix);
    const mapped = family === 6 && address.startsWith('::ffff:') && address.includes('.');
    if (mapped) bits -= 96;
    const limit = WIDEST_NARROW_PREFIX[mapped ? 4 : family as 4 | 6];
    if (Number.isFinite(bits) && bits < limit) return `${entry} is a /${bits}${mapped ? ' (IPv4-mapped)' : ''} network`;
  }
  return undefined;
}

function netmaskBits(mask: string): number {
  return mask.split('.').reduce((bits, octet) => bits + (Number(octet) >>> 0).toString(2).replace(/0/g, '').length, 0);
}

/** `loopback`, `10.0.0.0/8, 127.0.0.1`, a hop count such as `1`, or `true`/`false`, as express takes them. */
export function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined) return false;
  const trimmed = value.trim();
  if (/^(false|off|no)$/i.test(trimmed)) return false;
  if (/^(true|on|yes)$/i.test(trimmed)) return true;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  return trimmed;
}

function parseOrigins(reader: EnvReader, value: string | undefined): string[] {
  if (value === undefined) return [];
  const origins = value.split(',').map((origin) => origin.trim()).filter(Boolean);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin) reader.problem(`CORS_ORIGINS: "${origin}" is not an origin such as https://example.com`);
  }
  return origins;
}
