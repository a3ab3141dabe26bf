import { hkdfSync } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readAmqpTls, readAmqpUrl, readQueueSettings, type AmqpTlsSettings, type QueueSettings } from '@vanish/bus';
import { EnvReader, KeyRing, WEBHOOK_PRIVATE_KEYS_FILE_OPTIONS, loadKeyRing, parseWebhookUrl, type Env, type LogLevel, type Logger } from '@vanish/common';
import { readDatabaseSettings } from '@vanish/database';

/** An operator subscription (DECISIONS 11): every note's events, pseudonymous references only. */
export interface OperatorSubscription {
  /** Stable key of the subscription in delivery records: a hash of its URL, never the URL. */
  id: string;
  url: string;
  secret: string;
  /** Whether the client address is sent (off unless the operator turns it on). */
  includeIpAddress: boolean;
}

export interface WebhooksConfig {
  production: boolean;
  /** ADMIN_PORT: /metrics, /healthz, /readyz (the service has no public traffic). */
  adminPort: number;
  host: string;
  dataDir: string;
  logLevel: LogLevel;
  databaseUrl: string;
  databaseSslCa: string | undefined;
  amqpUrl: string | undefined;
  amqpTls: AmqpTlsSettings | undefined;
  /** AMQP_QUEUE_TYPE / AMQP_DELIVERY_LIMIT: the type of the queues it declares (quorum in production). */
  amqpQueues: QueueSettings;
  amqpExchange: string;
  queue: string;
  /** WEBHOOK_PRIVATE_KEYS: opens what notes sealed to this service (DECISIONS 1, 11). Its secret alone. */
  privateKeys: KeyRing;
  /** Key of the operator subscriptions' note pseudonyms (derived from the oldest private key). */
  pseudonymKey: Buffer;
  subscriptions: readonly OperatorSubscription[];
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: tests and laptops only; refused in production. */
  allowPrivateNetworks: boolean;
  /** Broker-held delays between attempts (before jitter); attempts = delays + 1, then the dead-letter queue. */
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  maxResponseBytes: number;
  hostConcurrency: number;
  /** WEBHOOK_HOST_QUEUE: deliveries that may wait in this process for a busy host's slot. */
  hostQueue: number;
  circuitFailureThreshold: number;
  circuitOpenMs: number;
  prefetch: number;
  deadLetterRetentionMs: number;
  queueWatchIntervalMs: number;
  recordRetentionMs: number;
  instance: string;
}

const HOUR = 3_600_000;
/** About a day (DECISIONS 11): 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h ≈ 23.7 h over 10 attempts. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [30_000, 120_000, 600_000, 1_800_000, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 8 * HOUR];

/** The only place the webhooks service reads its environment (DECISIONS 10, 11). */
export function loadWebhooksConfig(env: Env = process.env, logger?: Logger): Readonly<WebhooksConfig> {
  const reader = new EnvReader(env);
  const production = reader.isProduction;
  const dataDir = reader.str('DATA_DIR', './data');
  const database = readDatabaseSettings(reader, { fallback: `sqlite:${join(dataDir, 'webhooks.db')}`, example: 'webhooks' });
  const amqpUrl = readAmqpUrl(reader);
  reader.requireInProduction('AMQP_URL', amqpUrl, 'the webhooks service consumes note events from RabbitMQ');
  const amqpTls = readAmqpTls(reader, amqpUrl);
  const privateKeys = loadKeyRing(reader, 'WEBHOOK_PRIVATE_KEYS', dataDir, logger, 'losing it loses the webhook deliveries still pending', WEBHOOK_PRIVATE_KEYS_FILE_OPTIONS);
  const allowPrivateNetworks = reader.bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false);
  reader.refuseInProduction('WEBHOOK_ALLOW_PRIVATE_NETWORKS', allowPrivateNetworks, 'webhooks could reach the cluster\'s private addresses (SSRF)');
  const subscriptions = readSubscriptions(reader, production);
  const retryDelaysMs = readDelays(reader);

  const config: WebhooksConfig = {
    production,
    adminPort: reader.int('ADMIN_PORT', 9084, { min: 0, max: 65_535 }),
    host: reader.str('HOST', '0.0.0.0'),
    dataDir,
    logLevel: reader.oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    databaseUrl: database.url,
    databaseSslCa: database.sslCa,
    amqpUrl,
    amqpTls,
    amqpQueues: readQueueSettings(reader),
    amqpExchange: reader.str('AMQP_EXCHANGE', 'vanish'),
    queue: reader.str('WEBHOOK_QUEUE', 'webhooks.note-events'),
    privateKeys: privateKeys ?? KeyRing.generate('invalid'),
    pseudonymKey: Buffer.alloc(32),
    subscriptions,
    allowPrivateNetworks,
    retryDelaysMs,
    timeoutMs: reader.int('WEBHOOK_TIMEOUT_MS', 5_000, { min: 100, max: 30_000 }),
    maxResponseBytes: reader.int('WEBHOOK_MAX_RESPONSE_BYTES', 64 * 1024, { min: 0, max: 1024 * 1024 }),
    hostConcurrency: reader.int('WEBHOOK_HOST_CONCURRENCY', 4, { min: 1, max: 100 }),
    hostQueue: reader.int('WEBHOOK_HOST_QUEUE', 12, { min: 0, max: 1000 }),
    circuitFailureThreshold: reader.int('WEBHOOK_CIRCUIT_FAILURES', 5, { min: 1, max: 1000 }),
    circuitOpenMs: reader.int('WEBHOOK_CIRCUIT_OPEN_MS', 30_000, { min: 10, max: HOUR }),
    prefetch: reader.int('WEBHOOK_PREFETCH', 32, { min: 1, max: 1000 }),
    deadLetterRetentionMs: reader.int('WEBHOOK_DEAD_LETTER_RETENTION_MS', 7 * 24 * HOUR, { min: 1_000, max: 365 * 24 * HOUR }),
    queueWatchIntervalMs: reader.int('WEBHOOK_QUEUE_WATCH_INTERVAL_MS', 15_000, { min: 100, max: HOUR }),
    recordRetentionMs: 7 * 24 * HOUR,
    instance: reader.str('INSTANCE_ID', `${hostname()}-${process.pid}`),
  };
  reader.done();
  const oldest = config.privateKeys.keys[config.privateKeys.keys.length - 1]!;
  config.pseudonymKey = Buffer.from(hkdfSync('sha256', oldest.material, Buffer.alloc(0), 'vanish.webhooks.note-pseudonym.v1', 32));
  return Object.freeze(config);
}

/**
 * WEBHOOK_SUBSCRIPTIONS (or _FILE): a JSON array of `{ "url", "secret", "include_ip_address"? }`,
 * secrets in the Standard Webhooks `whsec_` form.
 */
function readSubscriptions(reader: EnvReader, production: boolean): OperatorSubscription[] {
  const text = reader.raw('WEBHOOK_SUBSCRIPTIONS');
  if (text === undefined || text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    reader.problem('WEBHOOK_SUBSCRIPTIONS: expected a JSON array of {"url", "secret"}');
    return [];
  }
  if (!Array.isArray(parsed)) {
    reader.problem('WEBHOOK_SUBSCRIPTIONS: expected a JSON array of {"url", "secret"}');
    return [];
  }
  const out: OperatorSubscription[] = [];
  parsed.forEach((entry: unknown, index) => {
    const item = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const url = typeof item.url === 'string' ? parseWebhookUrl(item.url, { requireHttps: production }) : { ok: false as const, reason: 'url is missing' };
    if (!url.ok) { reader.problem(`WEBHOOK_SUBSCRIPTIONS[${index}]: ${url.reason.replace('webhook_url', 'url')}`); return; }
    if (typeof item.secret !== 'string' || !/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(item.secret)) {
      reader.problem(`WEBHOOK_SUBSCRIPTIONS[${index}]: secret must be a Standard Webhooks secret (whsec_ and base64)`);
      return;
    }
    const id = `op:${Buffer.from(hkdfSync('sha256', Buffer.from(url.url.href), Buffer.alloc(0), 'vanish.webhooks.subscription-id', 8)).toString('hex')}`;
    out.push({ id, url: url.url.href, secret: item.secret, includeIpAddress: item.include_ip_address === true });
  });
  return out;
}

/** WEBHOOK_RETRY_DELAYS_MS, also read by the deploy-time topology declaration (it declares the same retry queues). */
export function readDelays(reader: EnvReader): number[] {
  const text = reader.raw('WEBHOOK_RETRY_DELAYS_MS');
  if (text === undefined) return [...DEFAULT_RETRY_DELAYS_MS];
  const delays = text.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.some((delay) => !Number.isInteger(delay) || delay < 1 || delay > 24 * HOUR)) {
    reader.problem('WEBHOOK_RETRY_DELAYS_MS: a comma-separated list of whole milliseconds (1 to 86400000)');
    return [...DEFAULT_RETRY_DELAYS_MS];
  }
  return delays;
}
