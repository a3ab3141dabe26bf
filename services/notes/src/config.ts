import { resolve } from 'node:path';
import { readAmqpTls, type AmqpTlsSettings } from '@vanish/bus';
import { readDatabaseSettings } from '@vanish/database';
import { EnvReader, loadKeyRing, loadSecretKey, type Env, type KeyRing, type Logger, type LogLevel } from '@vanish/common';

export interface NotesConfig {
  /** PORT: public traffic (API and web pages); 0 = ephemeral (tests). */
  port: number;
  /** ADMIN_PORT: /healthz, /readyz, /metrics; 0 = ephemeral. */
  adminPort: number;
  host: string;
  dataDir: string;
  /** `sqlite:PATH` (embedded default) or `mysql://user:pass@host:port/db[?ssl-mode=…&ssl-ca=…]`. */
  databaseUrl: string;
  /** DATABASE_SSL_CA(_FILE): CA bundle for MySQL TLS when the URL has no ssl-ca. */
  databaseSslCa: string | undefined;
  /** Origin of shareable links: `{publicBaseUrl}/{uuid}`. */
  publicBaseUrl: string;
  /** MASTER_KEYS: the first key seals, every key opens. */
  masterKeys: KeyRing;
  /** LOOKUP_KEY: the key of the uuid's HMAC; never rotates. */
  lookupKey: Buffer;
  /** MAIL_KEYS: seals mail commands for the mailer. */
  mailKeys: KeyRing;
  noteRetentionHours: number;
  sweepIntervalMs: number;
  /** Unset outside the all-in-one: the outbox keeps its rows and nothing is relayed. */
  amqpUrl: string | undefined;
  /** For amqps://: AMQP_TLS_CA(_FILE). */
  amqpTls: AmqpTlsSettings | undefined;
  amqpExchange: string;
  heartbeatIntervalMs: number;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  production: boolean;
  /** What loading decided that the operator must hear (generated keys); compose logs them. */
  warnings: readonly string[];
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/**
 * The only place the notes service reads its environment (DECISIONS 10). Every problem is
 * reported at once. Outside production, missing keys are generated once into DATA_DIR/keys with a
 * warning (to `logger` when given, else collected in `warnings`, which compose logs); with NODE_ENV=production no embedded default is accepted: SQLite,
 * a missing AMQP_URL, generated keys and the localhost link origin are all refused by name.
 */
export function loadNotesConfig(env: Env = process.env, logger?: Logger): Readonly<NotesConfig> {
  const reader = new EnvReader(env);
  const warnings: string[] = [];
  const keyLogger = logger ?? collectingLogger(warnings);
  const production = reader.isProduction;
  const dataDir = resolve(reader.str('DATA_DIR', './data'));

  const database = readDatabaseSettings(reader, { fallback: `sqlite:${resolve(dataDir, 'notes.db')}`, example: 'notes' });

  const publicBaseUrl = reader.publicBaseUrl('http://localhost:8080');
  reader.requireInProduction('PUBLIC_BASE_URL', reader.raw('PUBLIC_BASE_URL'), 'the origin of shareable links');

  const amqpUrl = reader.url('AMQP_URL', undefined, ['amqp:', 'amqps:']);
  reader.requireInProduction('AMQP_URL', amqpUrl, 'events and mail commands are relayed to RabbitMQ; without it the outbox only grows');
  const amqpTls = readAmqpTls(reader, amqpUrl);
  const amqpExchange = reader.str('AMQP_EXCHANGE', 'vanish');
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(amqpExchange)) reader.problem('AMQP_EXCHANGE: letters, digits, dot, dash, underscore only');

  const masterKeys = loadKeyRing(reader, 'MASTER_KEYS', dataDir, keyLogger);
  const lookupKey = loadSecretKey(reader, 'LOOKUP_KEY', dataDir, keyLogger);
  const mailKeys = loadKeyRing(reader, 'MAIL_KEYS', dataDir, keyLogger, 'losing it loses the e-mails waiting in the outbox and queues');

  const config: NotesConfig = {
    port: reader.int('PORT', 8081, { min: 0, max: 65_535 }),
    adminPort: reader.int('ADMIN_PORT', 9081, { min: 0, max: 65_535 }),
    host: reader.str('HOST', '0.0.0.0'),
    dataDir,
    databaseUrl: database.url,
    databaseSslCa: database.sslCa,
    publicBaseUrl,
    masterKeys: masterKeys!,
    lookupKey: lookupKey!,
    mailKeys: mailKeys!,
    noteRetentionHours: reader.int('NOTE_RETENTION_HOURS', 720, { min: 1, max: 87_600 }),
    sweepIntervalMs: reader.int('SWEEP_INTERVAL_MS', 60_000, { min: 100, max: 86_400_000 }),
    amqpUrl,
    amqpTls,
    amqpExchange,
    heartbeatIntervalMs: reader.int('HEARTBEAT_INTERVAL_MS', 10_000, { min: 100, max: 3_600_000 }),
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownGraceMs: reader.int('SHUTDOWN_GRACE_MS', 10_000, { min: 100, max: 600_000 }),
    production,
    warnings,
  };
  if (config.port !== 0 && config.port === config.adminPort) reader.problem('ADMIN_PORT: must differ from PORT');
  reader.done();
  return Object.freeze(config);
}

function collectingLogger(into: string[]): Logger {
  const logger: Logger = {
    debug() {},
    info() {},
    warn(msg) { into.push(msg); },
    error(msg) { into.push(msg); },
    child() { return logger; },
  };
  return logger;
}
