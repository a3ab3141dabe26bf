import { resolve } from 'node:path';
import { DEFAULT_SCRYPT_LIMIT, type ScryptLimitOptions } from './domain/scrypt-limit';
import { EnvReader, loadKeyRing, loadSecretKey, type Env, type KeyRing, type Logger, type LogLevel } from '@vanish/common';

export interface NotesConfig {
  /** PORT: public traffic (API and web pages); 0 = ephemeral (tests). */
  port: number;
  /** ADMIN_PORT: /healthz, /readyz, /metrics; 0 = ephemeral. */
  adminPort: number;
  host: string;
  dataDir: string;
  /** `sqlite:PATH` (embedded default) or `mysql://user:pass@host:port/db`. */
  databaseUrl: string;
  /** Origin of shareable links: `{publicBaseUrl}/{uuid}`. */
  publicBaseUrl: string;
  /** MASTER_KEYS: the first key seals, every key opens. */
  masterKeys: KeyRing;
  /** LOOKUP_KEY: the key of the uuid's HMAC; never rotates. */
  lookupKey: Buffer;
  /** MAIL_KEYS: seals mail commands for the mailer. */
  mailKeys: KeyRing;
  noteRetentionHours: number;
  /** SCRYPT_MAX_CONCURRENT, SCRYPT_MAX_QUEUED: the cap on passcode KDF work of this process. */
  scryptLimit: ScryptLimitOptions;
  sweepIntervalMs: number;
  /** Unset outside the all-in-one: the outbox keeps its rows and nothing is relayed. */
  amqpUrl: string | undefined;
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

  const databaseUrl = reader.str('DATABASE_URL', `sqlite:${resolve(dataDir, 'notes.db')}`);
  if (databaseUrl.startsWith('sqlite:')) {
    if (databaseUrl.slice('sqlite:'.length).trim() === '') reader.problem('DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/notes.db');
    if (production) reader.problem('DATABASE_URL: required with NODE_ENV=production (a mysql:// URL; the embedded SQLite default is for a laptop)');
  } else if (/^mysql:\/\//i.test(databaseUrl)) {
    try {
      const parsed = new URL(databaseUrl);
      if (parsed.pathname.replace(/^\//, '') === '') reader.problem('DATABASE_URL: a mysql:// URL must name its database, e.g. mysql://user:pass@host:3306/notes');
    } catch {
      reader.problem('DATABASE_URL: not a valid mysql:// URL');
    }
  } else {
    reader.problem('DATABASE_URL: expected mysql://user:pass@host:port/db or sqlite:PATH');
  }

  const rawBaseUrl = reader.url('PUBLIC_BASE_URL', 'http://localhost:8080', ['http:', 'https:']);
  reader.requireInProduction('PUBLIC_BASE_URL', reader.raw('PUBLIC_BASE_URL'), 'the origin of shareable links');
  const publicBaseUrl = rawBaseUrl.replace(/\/+$/, '');

  const amqpUrl = reader.url('AMQP_URL', undefined, ['amqp:', 'amqps:']);
  reader.requireInProduction('AMQP_URL', amqpUrl, 'events and mail commands are relayed to RabbitMQ; without it the outbox only grows');
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
    databaseUrl,
    publicBaseUrl,
    masterKeys: masterKeys!,
    lookupKey: lookupKey!,
    mailKeys: mailKeys!,
    noteRetentionHours: reader.int('NOTE_RETENTION_HOURS', 720, { min: 1, max: 87_600 }),
    scryptLimit: {
      maxConcurrent: reader.int('SCRYPT_MAX_CONCURRENT', DEFAULT_SCRYPT_LIMIT.maxConcurrent, { min: 1, max: 64 }),
      maxQueued: reader.int('SCRYPT_MAX_QUEUED', DEFAULT_SCRYPT_LIMIT.maxQueued, { min: 0, max: 10_000 }),
    },
    sweepIntervalMs: reader.int('SWEEP_INTERVAL_MS', 60_000, { min: 100, max: 86_400_000 }),
    amqpUrl,
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
