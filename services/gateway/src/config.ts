import { readFileSync } from 'node:fs';
import { EnvReader, loadSecretKey, readTlsCa, refuseInsecureTransportInProduction, type Env, type Logger, type LogLevel } from '@vanish/common';
import { redisTransportRisk } from './adapters/limiter/redis-tls';
import type { LimitPolicy } from './domain/limit-policy';

export interface GatewayConfig {
  port: number;
  adminPort: number;
  host: string;
  notesUrl: string;
  statsUrl: string;
  mailerUrl: string;
  /** Unset: in-memory limits (refused in production). */
  redisUrl: string | undefined;
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
  tls: { cert: Buffer; key: Buffer } | undefined;
  upstreamTimeoutMs: number;
  logLevel: LogLevel;
  shutdownGraceMs: number;
}

/** The only place the gateway reads its environment; every problem is reported at once. */
export function loadGatewayConfig(env: Env = process.env, logger?: Logger): Readonly<GatewayConfig> {
  const reader = new EnvReader(env);
  const dataDir = reader.str('DATA_DIR', './data');
  const redisUrl = reader.url('REDIS_URL', undefined, ['redis:', 'rediss:']);
  reader.requireInProduction('REDIS_URL', redisUrl, 'in-memory rate limits are per process; replicas would each grant the full limit');
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
  let tls: GatewayConfig['tls'];
  if ((certFile === undefined) !== (keyFile === undefined)) {
    reader.problem('TLS_CERT_FILE and TLS_KEY_FILE: set both or neither');
  } else if (certFile !== undefined && keyFile !== undefined) {
    try {
      tls = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
    } catch (err) {
      reader.problem(`TLS_CERT_FILE/TLS_KEY_FILE: cannot read (${(err as Error).message})`);
    }
  }

  const limiterKey = loadSecretKey(reader, 'LIMITER_KEY', dataDir, logger, 'losing it only resets the rate-limit counters');

  const config: GatewayConfig = {
    port: reader.int('PORT', 8080, { min: 0, max: 65_535 }),
    adminPort: reader.int('ADMIN_PORT', 9080, { min: 0, max: 65_535 }),
    host: reader.str('HOST', '0.0.0.0'),
    notesUrl: reader.url('NOTES_URL', 'http://127.0.0.1:8081', ['http:']),
    statsUrl: reader.url('STATS_URL', 'http://127.0.0.1:8082', ['http:']),
    mailerUrl: reader.url('MAILER_URL', 'http://127.0.0.1:8083', ['http:']),
    redisUrl,
    redisTlsCa,
    redisCommandTimeoutMs: reader.int('REDIS_COMMAND_TIMEOUT_MS', 200, { min: 10, max: 10_000 }),
    redisRetryIntervalMs: reader.int('REDIS_RETRY_INTERVAL_MS', 1000, { min: 0, max: 60_000 }),
    rateLimitKeyPrefix: reader.str('RATE_LIMIT_KEY_PREFIX', 'vanish:rl'),
    policy,
    limiterKey: limiterKey ?? Buffer.alloc(32),
    trustProxy: parseTrustProxy(reader.str('TRUST_PROXY')),
    corsOrigins: parseOrigins(reader, reader.str('CORS_ORIGINS')),
    requireHttps: reader.bool('REQUIRE_HTTPS', false),
    publicBaseUrl: reader.url('PUBLIC_BASE_URL', undefined, ['http:', 'https:']),
    tls,
    upstreamTimeoutMs: reader.int('UPSTREAM_TIMEOUT_MS', 10_000, { min: 100, max: 300_000 }),
    logLevel: reader.oneOf<LogLevel>('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'], 'info'),
    shutdownGraceMs: reader.int('SHUTDOWN_GRACE_MS', 10_000, { min: 0, max: 600_000 }),
  };
  reader.done();
  return Object.freeze(config);
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
