import { resolve } from 'node:path';
import { readAmqpTls, readAmqpUrl, readQueueSettings, type AmqpTlsSettings, type QueueSettings } from '@vanish/bus';
import { readDatabaseSettings } from '@vanish/database';
import { EnvReader, type Env, type LogLevel } from '@vanish/common';

export interface StatsConfig {
  /** PORT: GET /api/stats.php; 0 = ephemeral (tests). Default 8082. */
  port: number;
  /** ADMIN_PORT: /healthz, /readyz, /metrics. Default 9082. */
  adminPort: number;
  host: string;
  dataDir: string;
  /** `sqlite:PATH` (embedded default `sqlite:$DATA_DIR/stats.db`) or `mysql://user:pass@host:port/db`. */
  databaseUrl: string;
  /** DATABASE_SSL_CA(_FILE): CA bundle for MySQL TLS when the URL has no ssl-ca. */
  databaseSslCa: string | undefined;
  /** For amqps://: AMQP_TLS_CA(_FILE). */
  amqpTls: AmqpTlsSettings | undefined;
  /** RabbitMQ; unset: the in-process bus (all-in-one) or, alone, no events at all (said in the log). */
  amqpUrl: string | undefined;
  /** AMQP_EXCHANGE (default `vanish`). */
  amqpExchange: string;
  /** AMQP_QUEUE_TYPE / AMQP_DELIVERY_LIMIT: the type of the queues it declares (quorum in production). */
  amqpQueues: QueueSettings;
  /** AMQP_QUEUE_PREFIX (default empty): prefixes `stats.note-events` and `stats.heartbeats`. */
  queuePrefix: string;
  /** HEARTBEAT_INTERVAL_MS: the period services publish heartbeats with; three silent ones mean down. */
  heartbeatIntervalMs: number;
  /** EVENT_ID_RETENTION_HOURS: seen event ids are kept this long (default 168 = 7 days). */
  eventIdRetentionHours: number;
  /** PRUNE_INTERVAL_MS: how often old ids, buckets and heartbeats are pruned (default 600000). */
  pruneIntervalMs: number;
  logLevel: LogLevel;
  /** SHUTDOWN_GRACE_MS: hard limit on a graceful stop (default 10000). */
  shutdownGraceMs: number;
  production: boolean;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/**
 * The only place the stats service reads its environment (DECISIONS 10). All problems are
 * reported at once; with NODE_ENV=production the embedded defaults (SQLite, no AMQP_URL) are
 * refused by name.
 */
export function loadStatsConfig(env: Env = process.env): Readonly<StatsConfig> {
  const reader = new EnvReader(env);
  const production = reader.isProduction;
  const dataDir = resolve(reader.str('DATA_DIR', './data'));

  const database = readDatabaseSettings(reader, { fallback: `sqlite:${resolve(dataDir, 'stats.db')}`, example: 'stats' });

  const amqpUrl = readAmqpUrl(reader);
  reader.requireInProduction('AMQP_URL', amqpUrl, 'stats learns everything from RabbitMQ; the in-process bus is for the all-in-one laptop mode');
  const amqpTls = readAmqpTls(reader, amqpUrl);
  const amqpExchange = reader.str('AMQP_EXCHANGE', 'vanish');
  const queuePrefix = reader.str('AMQP_QUEUE_PREFIX', '');
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(amqpExchange)) reader.problem('AMQP_EXCHANGE: letters, digits, dot, dash, underscore only');
  if (!/^[A-Za-z0-9._-]{0,100}$/.test(queuePrefix)) reader.problem('AMQP_QUEUE_PREFIX: letters, digits, dot, dash, underscore only');

  const config: StatsConfig = {
    port: reader.int('PORT', 8082, { min: 0, max: 65_535 }),
    adminPort: reader.int('ADMIN_PORT', 9082, { min: 0, max: 65_535 }),
    host: reader.str('HOST', '0.0.0.0'),
    dataDir,
    databaseUrl: database.url,
    databaseSslCa: database.sslCa,
    amqpUrl,
    amqpQueues: readQueueSettings(reader),
    amqpTls,
    amqpExchange,
    queuePrefix,
    heartbeatIntervalMs: reader.int('HEARTBEAT_INTERVAL_MS', 10_000, { min: 100, max: 3_600_000 }),
    eventIdRetentionHours: reader.int('EVENT_ID_RETENTION_HOURS', 168, { min: 1, max: 24 * 365 }),
    pruneIntervalMs: reader.int('PRUNE_INTERVAL_MS', 600_000, { min: 1_000, max: 86_400_000 }),
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownGraceMs: reader.int('SHUTDOWN_GRACE_MS', 10_000, { min: 100, max: 600_000 }),
    production,
  };
  reader.done();
  return Object.freeze(config);
}
