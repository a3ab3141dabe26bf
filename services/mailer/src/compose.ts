import {
  Counter, Lifecycle, Outages, createAdminApp, createLogger, createRegistry, dependencyFailureCounter, PUBLIC_LISTEN, ADMIN_LISTEN, listen, systemClock,
  type Clock, type Logger, type MessageConsumer, type MessagePublisher, type Registry,
} from '@vanish/common';
import { HeartbeatPublisher, RabbitMqBus, dlqName } from '@vanish/bus';
import type { MailerConfig } from './config';
import { configureKnex } from './adapters/db/configure-knex';
import { isDatabaseUnavailable } from '@vanish/database';
import { KnexMailerStore } from './adapters/db/knex-mailer-store';
import { migrateToLatest } from './adapters/db/migrate';
import { FileMailTransport } from './adapters/mail/file-mail-transport';
import { SmtpMailTransport } from './adapters/mail/smtp-mail-transport';
import { MailCommandConsumer } from './consumers/mail-command-consumer';
import { MailCommandOpener } from './consumers/mail-command-opener';
import { AddressHasher } from './domain/address-hasher';
import { MailDeliveryService } from './domain/mail-delivery-service';
import type { MailTransport } from './domain/mail-transport';
import type { MailerStore } from './domain/mailer-store';
import { RetryPolicy } from './domain/retry-policy';
import { UnsubscribeService } from './domain/unsubscribe-service';
import { UnsubscribeTokens } from './domain/unsubscribe-tokens';
import { createMailerApp } from './http/create-app';
import { RabbitMqDeadLetterQueue } from './adapters/amqp/rabbitmq-dead-letter-queue';
import { DeadLetterSweeper } from './jobs/dead-letter-sweeper';
import { DeliveryRecordPurger } from './jobs/delivery-record-purger';
import { EmailHealthProbe } from './jobs/email-health';
import { createMailerMetrics } from './metrics';

export interface MailerOverrides {
  /**
   * How long it keeps serving after it turned not-ready, before it stops listening (Lifecycle, default
   * 500 ms). The all-in-one gives 0: only its gateway is reached from outside, and it drains first.
   */
  drainDelayMs?: number;
  /** The all-in-one process's shared in-process bus; otherwise AMQP_URL decides. */
  bus?: MessagePublisher & MessageConsumer;
  logger?: Logger;
  registry?: Registry;
  clock?: Clock;
  /** Tests: a transport that misbehaves on purpose. */
  transport?: MailTransport;
  random?: () => number;
}

export interface MailerService {
  start(): Promise<{ port: number; adminPort: number }>;
  stop(): Promise<void>;
  /** SIGTERM/SIGINT: drain in reverse order and exit 0, or 1 past the grace period. */
  onSignals(graceMs: number): void;
  readonly store: MailerStore;
  readonly transport: MailTransport;
  readonly hasher: AddressHasher;
  readonly tokens: UnsubscribeTokens;
  readonly registry: Registry;
  readonly emailHealth: EmailHealthProbe;
}

/** The composition root: picks the adapters from the config and wires them (STYLE H2). */
export async function createMailerService(config: MailerConfig, overrides: MailerOverrides = {}): Promise<MailerService> {
  const logger = overrides.logger ?? createLogger('mailer', config.logLevel);
  const registry = overrides.registry ?? createRegistry('mailer');
  const clock = overrides.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, overrides.drainDelayMs);

  // Each dependency's outage is one event in the log (common's DependencyState): the database (any
  // query that answers ends it), the SMTP server (a send it takes ends it) and the broker (the bus).
  const outages = new Outages({ logger: logger.child('mailer/db'), onFailure: dependencyFailureCounter(registry, 'mailer'), dependencyOf: (err) => (isDatabaseUnavailable(err) ? 'database' : undefined) });
  const knex = configureKnex(config.databaseUrl, { logger: logger.child('mailer/db'), sslCa: config.databaseSslCa, outage: outages.of('database') });
  knex.on('query-response', () => outages.of('database').answered());
  /** A failure of work that belongs to a dependency's outage (the database down) is counted there, logged once. */
  const reportedAsOutage = (err: unknown, fields: Record<string, unknown>): boolean => {
    const state = outages.forError(err);
    state?.failed({ task: 'mail command', ...fields, err });
    return state !== undefined;
  };
  const store = new KnexMailerStore(knex);
  const transport = overrides.transport ?? (config.smtp
    ? new SmtpMailTransport(config.smtp)
    : new FileMailTransport({ directory: config.outboxDir, logger: logger.child('mailer/file-transport') }));
  const hasher = new AddressHasher(config.hashKey);
  const tokens = new UnsubscribeTokens(config.hashKey);
  const observer = createMailerMetrics(registry);
  const legacyOpened = new Counter({
    name: 'mailer_legacy_mail_commands_opened_total',
    help: 'Mail command deliveries (retries included) that opened only with the legacy symmetric MAIL_KEYS ring; the migration is drained when it stays flat',
    registers: [registry],
  });
  const service = new MailDeliveryService({
    store, transport, hasher, tokens, clock, observer,
    retryPolicy: new RetryPolicy(config.retry, overrides.random),
    logger: logger.child('mailer/delivery'),
    mailFrom: config.mailFrom,
    publicBaseUrl: config.publicBaseUrl,
    quotaPerHour: config.quotaPerHour,
    quotaPerDay: config.quotaPerDay,
    // An SMTP phase that goes quiet for SMTP_TIMEOUT_MS fails; a pending send renews its hold, and a killed
    // attempt's command waits this long before it is sent again (the embedded file outbox writes at once).
    attemptLeaseMs: config.smtp?.timeoutMs ?? 30_000,
    smtpOutage: outages.of('smtp', { logger: logger.child('mailer/delivery'), counting: 'sends failed' }),
    reportedAsOutage,
  });
  const unsubscribe = new UnsubscribeService({ store, tokens, clock, logger: logger.child('mailer/unsubscribe') });
  const emailHealth = new EmailHealthProbe(transport);
  const purger = new DeliveryRecordPurger({ store, clock, retentionMs: config.recordRetentionMs, intervalMs: 3_600_000, logger });

  let started: { port: number; adminPort: number } | undefined;
  return {
    store, transport, hasher, tokens, registry, emailHealth,
    async start() {
      if (started) return started;
      lifecycle.add('database', () => knex.destroy());
      lifecycle.add('mail transport', () => transport.close());
      await migrateToLatest(knex);
      if (config.hashKeySource !== 'MAILER_HASH_KEY') {
        const ring = config.hashKeySource === 'derived-from-MAIL_KEYS' ? 'MAIL_KEYS' : 'MAIL_PRIVATE_KEYS';
        logger.info(`address-hash key derived from the oldest ${ring} key; set MAILER_HASH_KEY before retiring that key${ring === 'MAIL_KEYS' ? ' or the MAIL_KEYS ring' : ''}`);
      }
      if (config.legacyMailKeys) {
        logger.info('MAIL_KEYS (legacy ring) still opens mail commands sealed before MAIL_PUBLIC_KEYS; retire it once mailer_legacy_mail_commands_opened_total stays flat (docs/security.md)');
      }
      if (transport.kind === 'file') logger.warn(`SMTP_URL is not set: e-mails are written as .eml files to ${config.outboxDir}`);

      let bus: (MessagePublisher & MessageConsumer) | undefined = overrides.bus;
      if (!bus && config.amqpUrl) {
        const rabbit = await RabbitMqBus.connect({
          url: config.amqpUrl, tls: config.amqpTls, exchange: config.amqpExchange, queues: config.amqpQueues, logger: logger.child('mailer/bus'), registry,
          connectionName: `mailer ${config.instance}`, connectLazily: true,
          outage: outages.of('rabbitmq', { logger: logger.child('mailer/bus'), counting: 'reconnect attempts failed' }),
        });
        lifecycle.add('bus', () => rabbit.close());
        bus = rabbit;
        // Dead-lettered commands still hold a sealed link: dropped after their retention (DECISIONS 1).
        const sweeper = new DeadLetterSweeper({
          queue: new RabbitMqDeadLetterQueue({ url: config.amqpUrl, tls: config.amqpTls, queue: dlqName(config.mailQueue), connectionName: `mailer ${config.instance} dead-letter sweeper` }),
          clock, retentionMs: config.deadLetterRetentionMs, intervalMs: config.deadLetterSweepIntervalMs,
          logger: logger.child('mailer/dead-letter-sweeper'),
        });
        sweeper.start();
        lifecycle.add('dead-letter sweeper', () => sweeper.stop());
      }
      if (bus) {
        const consumer = new MailCommandConsumer({
          consumer: bus, service, observer,
          opener: new MailCommandOpener({
            privateKeys: config.mailPrivateKeys, legacyKeys: config.legacyMailKeys, onLegacyOpened: () => legacyOpened.inc(),
          }),
          logger: logger.child('mailer/mail-commands'),
          queue: config.mailQueue, prefetch: config.prefetch,
          storeRetryDelayMs: config.retry.initialDelayMs,
          reportedAsOutage,
        });
        const heartbeats = new HeartbeatPublisher({
          publisher: bus, service: 'mailer', instance: config.instance, intervalMs: config.heartbeatIntervalMs,
          probe: async () => ({ email: await emailHealth.probe() }), logger: logger.child('mailer/heartbeat'),
          now: () => clock.now(),
        });
        lifecycle.add('heartbeats', () => heartbeats.stop());
        heartbeats.start();
        lifecycle.add('mail command consumer', () => consumer.stop());
        await consumer.start();
      } else {
        logger.warn('AMQP_URL is not set and no bus was given: this mailer consumes no mail commands (it still serves unsubscribe pages)');
      }
      purger.start();
      lifecycle.add('delivery record purger', () => purger.stop());

      const app = createMailerApp({ unsubscribe, registry, logger: logger.child('mailer/http'), outages });
      const server = await listen(app, config.port, config.host, undefined, PUBLIC_LISTEN);
      lifecycle.add('http server', () => server.close());
      const admin = await listen(createAdminApp({
        registry,
        checks: [{ name: 'database', check: () => store.ping() }],
        isDraining: () => lifecycle.isDraining,
        logger: logger.child('mailer/admin'),
      }), config.adminPort, config.host, undefined, ADMIN_LISTEN);
      lifecycle.add('admin server', () => admin.close());
      started = { port: server.port, adminPort: admin.port };
      logger.info('mailer started', { port: server.port, adminPort: admin.port, transport: transport.kind, bus: bus ? 'yes' : 'none' });
      return started;
    },
    stop: () => lifecycle.stop(),
    onSignals: (graceMs) => lifecycle.onSignals(graceMs),
  };
}
