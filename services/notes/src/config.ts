import { resolve } from 'node:path';
import { readAmqpTls, readAmqpUrl, type AmqpTlsSettings } from '@vanish/bus';
import { readDatabaseSettings } from '@vanish/database';
import { DEFAULT_EXPIRY_PRESETS, type ExpiryPreset, parseExpiryPresets } from './http/pages/expiry-presets';
import { EnvReader, KeyRing, MAIL_PRIVATE_KEYS_FILE_OPTIONS, NOTES_KEY_FILE_OPTIONS, WEBHOOK_PRIVATE_KEYS_FILE_OPTIONS, loadKeyRing, loadPublicKeyRing, loadSecretKey, type Env, type Logger, type LogLevel } from '@vanish/common';
import { DEFAULT_SCRYPT_LIMIT, type ScryptLimitOptions } from './domain/scrypt-limit';
import { readFileStorageSettings, type FileStorageSettings } from './files/storage/settings';
import { DEFAULT_FILE_LIMITS, type FileLimits } from './files/file-service';

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
  /**
   * How mail commands (they carry a link and an address) are sealed (DECISIONS 1): to the mailer's
   * public keys (MAIL_PUBLIC_KEYS), or, only while a deployment migrates, under the symmetric legacy
   * ring MAIL_KEYS when MAIL_PUBLIC_KEYS is not set yet.
   */
  mailSealing: { kind: 'to-mailer'; publicKeys: KeyRing } | { kind: 'legacy'; keys: KeyRing };
  /** RECEIPT_SIGNING_KEYS: Ed25519 seeds; the first signs receipts, every key's public half is published. */
  receiptSigningKeys: KeyRing;
  /**
   * DECISIONS 11: WEBHOOK_PUBLIC_KEYS, the webhooks service's public ring (events and stored
   * webhooks are sealed to it). Outside production derived from WEBHOOK_PRIVATE_KEYS (generated into
   * DATA_DIR); in production unset means webhooks are off (a webhook_url is refused).
   */
  webhookPublicKeys: KeyRing | undefined;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: webhook URLs may name private addresses (tests; refused in production). */
  webhookAllowPrivateNetworks: boolean;
  noteRetentionHours: number;
  /** SCRYPT_MAX_CONCURRENT, SCRYPT_MAX_QUEUED: the cap on passcode KDF work of this process. */
  scryptLimit: ScryptLimitOptions;
  /** EXPIRY_PRESETS: the lifetimes the create page offers (`5m,1h,1d,7d,30d`), besides custom hours. */
  expiryPresets: ExpiryPreset[];
  sweepIntervalMs: number;
  /** FILE_STORAGE (fs under DATA_DIR/files, or s3) and the S3_* settings (DECISIONS 14, docs/files.md). */
  fileStorage: FileStorageSettings;
  /**
   * DECISIONS 14: FILE_MAX_BYTES (per note, default 1 GiB), FILE_MAX_COUNT (default 20),
   * FILE_UPLOAD_WINDOW_HOURS (default 24), FILE_DOWNLOAD_WINDOW_MINUTES (default 15).
   */
  files: FileLimits;
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

  const amqpUrl = readAmqpUrl(reader);
  reader.requireInProduction('AMQP_URL', amqpUrl, 'events and mail commands are relayed to RabbitMQ; without it the outbox only grows');
  const amqpTls = readAmqpTls(reader, amqpUrl);
  const amqpExchange = reader.str('AMQP_EXCHANGE', 'vanish');
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(amqpExchange)) reader.problem('AMQP_EXCHANGE: letters, digits, dot, dash, underscore only');

  const masterKeys = loadKeyRing(reader, 'MASTER_KEYS', dataDir, keyLogger, undefined, NOTES_KEY_FILE_OPTIONS);
  const lookupKey = loadSecretKey(reader, 'LOOKUP_KEY', dataDir, keyLogger, undefined, NOTES_KEY_FILE_OPTIONS);
  const mailSealing = loadMailSealing(reader, dataDir, keyLogger);
  const receiptSigningKeys = loadKeyRing(reader, 'RECEIPT_SIGNING_KEYS', dataDir, keyLogger,
    'receipts signed with it can no longer be checked against a published key', NOTES_KEY_FILE_OPTIONS);
  const webhookPublicKeys = production && reader.raw('WEBHOOK_PUBLIC_KEYS') === undefined
    ? undefined
    : loadPublicKeyRing(reader, 'WEBHOOK_PUBLIC_KEYS', 'WEBHOOK_PRIVATE_KEYS', dataDir, keyLogger, 'losing it loses the webhook deliveries still pending', WEBHOOK_PRIVATE_KEYS_FILE_OPTIONS);
  const webhookAllowPrivateNetworks = reader.bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false);
  reader.refuseInProduction('WEBHOOK_ALLOW_PRIVATE_NETWORKS', webhookAllowPrivateNetworks,
    'webhooks could be pointed at the cluster\'s private addresses (SSRF)');

  let expiryPresets: ExpiryPreset[] = [];
  try {
    expiryPresets = parseExpiryPresets(reader.str('EXPIRY_PRESETS', DEFAULT_EXPIRY_PRESETS));
  } catch (err) {
    reader.problem(`EXPIRY_PRESETS: ${(err as Error).message}`);
  }

  const fileStorage = readFileStorageSettings(reader, dataDir, (message) => keyLogger.warn(message));

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
    mailSealing: mailSealing!,
    receiptSigningKeys: receiptSigningKeys!,
    webhookPublicKeys,
    webhookAllowPrivateNetworks,
    noteRetentionHours: reader.int('NOTE_RETENTION_HOURS', 720, { min: 1, max: 87_600 }),
    scryptLimit: {
      maxConcurrent: reader.int('SCRYPT_MAX_CONCURRENT', DEFAULT_SCRYPT_LIMIT.maxConcurrent, { min: 1, max: 64 }),
      maxQueued: reader.int('SCRYPT_MAX_QUEUED', DEFAULT_SCRYPT_LIMIT.maxQueued, { min: 0, max: 10_000 }),
    },
    expiryPresets,
    sweepIntervalMs: reader.int('SWEEP_INTERVAL_MS', 60_000, { min: 100, max: 86_400_000 }),
    fileStorage,
    files: {
      maxBytes: reader.int('FILE_MAX_BYTES', DEFAULT_FILE_LIMITS.maxBytes, { min: 1, max: 2 ** 50 }),
      maxCount: reader.int('FILE_MAX_COUNT', DEFAULT_FILE_LIMITS.maxCount, { min: 1, max: 1000 }),
      uploadWindowHours: reader.int('FILE_UPLOAD_WINDOW_HOURS', DEFAULT_FILE_LIMITS.uploadWindowHours, { min: 1, max: 8760 }),
      downloadWindowMinutes: reader.int('FILE_DOWNLOAD_WINDOW_MINUTES', DEFAULT_FILE_LIMITS.downloadWindowMinutes, { min: 1, max: 1440 }),
    },
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

/**
 * MAIL_PUBLIC_KEYS wins (outside production, MAIL_PRIVATE_KEYS too); MAIL_KEYS alone keeps the old
 * symmetric sealing (a deployment that has not given notes the public ring yet: docs/operations.md,
 * "Migrating from MAIL_KEYS"); neither: the public half of the mailer's private ring generated into
 * DATA_DIR (embedded default; refused in production).
 */
function loadMailSealing(reader: EnvReader, dataDir: string, logger: Logger): NotesConfig['mailSealing'] | undefined {
  const legacyText = reader.raw('MAIL_KEYS');
  // In one process with the mailer (all-in-one, outside production) MAIL_PRIVATE_KEYS gives the public ring too.
  const publicRingGiven = reader.raw('MAIL_PUBLIC_KEYS') !== undefined || (!reader.isProduction && reader.raw('MAIL_PRIVATE_KEYS') !== undefined);
  if (!publicRingGiven && legacyText !== undefined) {
    try {
      const keys = KeyRing.parse(legacyText);
      logger.warn('MAIL_KEYS: mail commands are sealed with the symmetric legacy ring, which opens them for whoever holds the notes secrets; set MAIL_PUBLIC_KEYS (the mailer\'s public keys) and remove MAIL_KEYS from notes');
      return { kind: 'legacy', keys };
    } catch (err) {
      reader.problem(`MAIL_KEYS: ${(err as Error).message}`);
      return undefined;
    }
  }
  const publicKeys = loadPublicKeyRing(reader, 'MAIL_PUBLIC_KEYS', 'MAIL_PRIVATE_KEYS', dataDir, logger,
    'losing it loses the e-mails waiting in the outbox and queues', MAIL_PRIVATE_KEYS_FILE_OPTIONS);
  if (legacyText !== undefined) logger.warn('MAIL_KEYS is set but no longer used by notes (MAIL_PUBLIC_KEYS seals mail commands): remove it from the notes secrets');
  return publicKeys && { kind: 'to-mailer', publicKeys };
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
