import { hkdfSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readAmqpTls, readAmqpUrl, readQueueSettings, type AmqpTlsSettings, type QueueSettings } from '@vanish/bus';
import {
  EnvReader, KeyRing, MAIL_PRIVATE_KEYS_FILE_OPTIONS, loadKeyRing, readTlsCa, refuseInsecureTransportInProduction, type Env, type LogLevel, type Logger,
} from '@vanish/common';
import { readDatabaseSettings } from '@vanish/database';
import { smtpTransportRisk } from './adapters/mail/smtp-tls';

export interface SmtpSettings {
  /** smtp:// (STARTTLS when offered, or required with ?starttls=required) or smtps:// (TLS from the start). */
  url: string;
  /** SMTP_TLS_CA(_FILE): CA bundle the server's certificate must chain to; unset: Node's public roots. */
  ca?: string;
  poolSize: number;
  /** Connecting, DNS and the greeting (SMTP_TIMEOUT_MS); also how long a send holds its command. */
  timeoutMs: number;
  /**
   * How long a server that greeted may stay silent (SMTP_REPLY_TIMEOUT_MS): above all while it takes a
   * message and before its final 250. Never shorter than timeoutMs.
   */
  replyTimeoutMs: number;
}

export interface MailerConfig {
  production: boolean;
  port: number;
  adminPort: number;
  /** HOST: the address both ports listen on. */
  host: string;
  dataDir: string;
  logLevel: LogLevel;
  publicBaseUrl: string;
  databaseUrl: string;
  /** DATABASE_SSL_CA(_FILE): CA bundle for MySQL TLS when the URL has no ssl-ca. */
  databaseSslCa: string | undefined;
  amqpUrl: string | undefined;
  /** For amqps://: AMQP_TLS_CA(_FILE). */
  amqpTls: AmqpTlsSettings | undefined;
  /** Topic exchange and queue names; tests use their own. */
  amqpExchange: string;
  /** AMQP_QUEUE_TYPE / AMQP_DELIVERY_LIMIT: the type of the queues it declares (quorum in production). */
  amqpQueues: QueueSettings;
  mailQueue: string;
  /** Unset: e-mails are written as .eml files to outboxDir (the embedded default). */
  smtp: SmtpSettings | undefined;
  outboxDir: string;
  mailFrom: string;
  /**
   * MAIL_PRIVATE_KEYS: X25519 private keys; notes seals mail commands to their public half
   * (MAIL_PUBLIC_KEYS) and cannot open them (DECISIONS 1). A secret of the mailer alone.
   */
  mailPrivateKeys: KeyRing;
  /**
   * MAIL_KEYS, the symmetric ring notes sealed with before MAIL_PUBLIC_KEYS: kept only to open the
   * commands still queued from then; retired once they are drained (docs/security.md).
   */
  legacyMailKeys: KeyRing | undefined;
  /** How long a dead-lettered mail command is kept before it is dropped (its body holds a sealed link). */
  deadLetterRetentionMs: number;
  /** How often the dead-letter queue is swept for commands past their retention. */
  deadLetterSweepIntervalMs: number;
  /** Key of the keyed hash of addresses (quota, idempotency, suppression records, unsubscribe tokens). */
  hashKey: Buffer;
  hashKeySource: 'MAILER_HASH_KEY' | 'derived-from-MAIL_KEYS' | 'derived-from-MAIL_PRIVATE_KEYS';
  quotaPerHour: number;
  quotaPerDay: number;
  retry: { initialDelayMs: number; maxDelayMs: number; horizonMs: number };
  /** How long delivery records (idempotency by command id) are kept. */
  recordRetentionMs: number;
  heartbeatIntervalMs: number;
  prefetch: number;
  instance: string;
}

const HOUR = 3_600_000;

/** The only place the mailer reads its environment (DECISIONS 10). */
export function loadMailerConfig(env: Env = process.env, logger?: Logger): Readonly<MailerConfig> {
  const reader = new EnvReader(env);
  const production = reader.isProduction;
  const dataDir = reader.str('DATA_DIR', './data');

  const database = readDatabaseSettings(reader, { fallback: `sqlite:${join(dataDir, 'mailer.db')}`, example: 'mailer' });

  const amqpUrl = readAmqpUrl(reader);
  reader.requireInProduction('AMQP_URL', amqpUrl, 'the mailer consumes mail commands from RabbitMQ');
  const amqpTls = readAmqpTls(reader, amqpUrl);

  const smtpUrl = reader.url('SMTP_URL', undefined, ['smtp:', 'smtps:']);
  reader.requireInProduction('SMTP_URL', smtpUrl, 'file mail is the embedded default');
  const smtpCa = readTlsCa(reader, 'SMTP_TLS_CA');
  if (smtpUrl !== undefined) {
    refuseInsecureTransportInProduction(reader, { variable: 'SMTP_URL', risk: smtpTransportRisk(smtpUrl), optOut: 'SMTP_ALLOW_PLAINTEXT' });
  }
  const smtp: SmtpSettings | undefined = smtpUrl === undefined ? undefined : {
    url: smtpUrl,
    ca: smtpCa,
    poolSize: reader.int('SMTP_POOL_SIZE', 10, { min: 1, max: 100 }),
    timeoutMs: reader.int('SMTP_TIMEOUT_MS', 30_000, { min: 100, max: 600_000 }),
    replyTimeoutMs: 0,
  };
  // RFC 5321 4.5.3.2.6 gives the reply to a message's end 10 minutes, "to avoid duplicate messages": a
  // client that gives up earlier on a server that took the message (slow, or this process descheduled
  // for a moment) sends it again. The short SMTP_TIMEOUT_MS stays for connecting and the greeting.
  // Not 10 minutes by default: the same wait applies to a pooled connection whose server went silent
  // after greeting, and holds its e-mail that long; 2 minutes (RFC 5321's DATA initiation) bounds both.
  if (smtp) smtp.replyTimeoutMs = Math.max(smtp.timeoutMs, reader.int('SMTP_REPLY_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }));

  const mailFrom = reader.str('MAIL_FROM', 'notes@localhost');
  if (!/^[^\s@<>"(),;:\\[\]]+@[^\s@<>"(),;:\\[\]]+$/.test(mailFrom)) reader.problem('MAIL_FROM: expected one plain address, e.g. notes@example.com');

  const publicBaseUrl = reader.publicBaseUrl('http://localhost:8080');
  reader.requireInProduction('PUBLIC_BASE_URL', reader.raw('PUBLIC_BASE_URL'), 'links in e-mails must name the public origin');

  const mailPrivateKeys = loadKeyRing(reader, 'MAIL_PRIVATE_KEYS', dataDir, logger, 'losing it loses the e-mails waiting in the outbox and queues', MAIL_PRIVATE_KEYS_FILE_OPTIONS);
  const legacyMailKeys = loadLegacyMailKeys(reader, dataDir);
  const hashKeyText = reader.raw('MAILER_HASH_KEY');
  let hashKey: Buffer | undefined;
  if (hashKeyText !== undefined) {
    hashKey = Buffer.from(hashKeyText, 'base64');
    if (hashKey.length !== 32) {
      reader.problem('MAILER_HASH_KEY: must be 32 bytes of base64');
      hashKey = undefined;
    }
  }

  const horizonMs = reader.int('MAIL_RETRY_HORIZON_MS', 24 * HOUR, { min: 1, max: 30 * 24 * HOUR });
  const config: MailerConfig = {
    production,
    port: reader.int('PORT', 8083, { min: 0, max: 65535 }),
    adminPort: reader.int('ADMIN_PORT', 9083, { min: 0, max: 65535 }),
    host: reader.str('HOST', '0.0.0.0'),
    dataDir,
    logLevel: reader.oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    publicBaseUrl,
    databaseUrl: database.url,
    databaseSslCa: database.sslCa,
    amqpUrl,
    amqpQueues: readQueueSettings(reader),
    amqpTls,
    amqpExchange: reader.str('AMQP_EXCHANGE', 'vanish'),
    mailQueue: reader.str('MAIL_QUEUE', 'mailer.mail-commands'),
    smtp,
    outboxDir: reader.str('MAIL_OUTBOX_DIR', join(dataDir, 'outbox')),
    mailFrom,
    mailPrivateKeys: mailPrivateKeys ?? KeyRing.generate('invalid'),
    legacyMailKeys,
    deadLetterRetentionMs: reader.int('MAIL_DEAD_LETTER_RETENTION_MS', 7 * 24 * HOUR, { min: 1_000, max: 365 * 24 * HOUR }),
    deadLetterSweepIntervalMs: reader.int('MAIL_DEAD_LETTER_SWEEP_INTERVAL_MS', HOUR, { min: 100, max: 24 * HOUR }),
    hashKey: hashKey ?? Buffer.alloc(32),
    hashKeySource: hashKey ? 'MAILER_HASH_KEY' : legacyMailKeys ? 'derived-from-MAIL_KEYS' : 'derived-from-MAIL_PRIVATE_KEYS',
    quotaPerHour: reader.int('MAIL_QUOTA_PER_HOUR', 10, { min: 0, max: 1_000_000 }),
    quotaPerDay: reader.int('MAIL_QUOTA_PER_DAY', 50, { min: 0, max: 10_000_000 }),
    retry: {
      initialDelayMs: reader.int('MAIL_RETRY_INITIAL_DELAY_MS', 10_000, { min: 1, max: 24 * HOUR }),
      maxDelayMs: reader.int('MAIL_RETRY_MAX_DELAY_MS', HOUR, { min: 1, max: 24 * HOUR }),
      horizonMs,
    },
    recordRetentionMs: Math.max(7 * 24 * HOUR, 2 * horizonMs),
    heartbeatIntervalMs: reader.int('HEARTBEAT_INTERVAL_MS', 10_000, { min: 10, max: 3_600_000 }),
    prefetch: reader.int('MAIL_PREFETCH', 10, { min: 1, max: 1000 }),
    instance: reader.str('INSTANCE_ID', `${hostname()}-${process.pid}`),
  };
  if (config.quotaPerDay < config.quotaPerHour) reader.problem('MAIL_QUOTA_PER_DAY: must be at least MAIL_QUOTA_PER_HOUR');
  reader.done();
  if (!hashKey) config.hashKey = deriveHashKey(config.legacyMailKeys ?? config.mailPrivateKeys);
  return Object.freeze(config);
}

/**
 * MAIL_KEYS when set; outside production also the ring an older version generated into DATA_DIR, so
 * that a laptop's queued commands still open after an upgrade. Never generated any more.
 */
function loadLegacyMailKeys(reader: EnvReader, dataDir: string): KeyRing | undefined {
  const text = reader.raw('MAIL_KEYS');
  if (text !== undefined) {
    try {
      return KeyRing.parse(text);
    } catch (err) {
      reader.problem(`MAIL_KEYS: ${(err as Error).message}`);
      return undefined;
    }
  }
  const generated = join(dataDir, 'keys', 'mail_keys.txt');
  if (reader.isProduction || !existsSync(generated)) return undefined;
  return KeyRing.parse(readFileSync(generated, 'utf8').trim());
}

/**
 * Without MAILER_HASH_KEY, the address-hash key is derived (HKDF-SHA-256) from the OLDEST key of
 * MAIL_KEYS while that legacy ring is configured, else of MAIL_PRIVATE_KEYS (the last in the ring,
 * which a rotation keeps longest). Retiring that key, or the whole MAIL_KEYS ring, changes every
 * hash (quotas and suppressions are forgotten, unsubscribe links stop working): set MAILER_HASH_KEY
 * to the derived value (or any 32 random bytes) before retiring it.
 */
export function deriveHashKey(mailKeys: KeyRing): Buffer {
  const oldest = mailKeys.keys[mailKeys.keys.length - 1]!;
  return Buffer.from(hkdfSync('sha256', oldest.material, Buffer.alloc(0), 'vanish.mailer.address-hash.v1', 32));
}
