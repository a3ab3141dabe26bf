import {
  ConsumerOpener, Lifecycle, Outages, dependencyFailureCounter, WEBHOOK_EVENT_NAMES, REQUEST_SUBMITTED_EVENT, WEBHOOK_SEAL_PURPOSE, WEBHOOK_TARGET_SEAL_PURPOSE, createAdminApp, createLogger,
  createRegistry, ADMIN_LISTEN, listen, systemClock, type Clock, type Logger, type MessageConsumer, type MessagePublisher, type Subscription,
} from '@vanish/common';
import { InProcessBus, RabbitMqBus } from '@vanish/bus';
import { configureKnex as configureDatabase, isDatabaseUnavailable } from '@vanish/database';
import type { Knex } from 'knex';
import type { Registry } from 'prom-client';
import { RabbitMqQueueWatch, type QueueWatch } from './adapters/amqp/rabbitmq-queue-watch';
import { KnexDeliveryStore } from './adapters/db/knex-delivery-store';
import { migrateToLatest } from './adapters/db/migrate';
import { SafeHttpSender } from './adapters/http/safe-http-sender';
import type { WebhooksConfig } from './config';
import { HostGuard } from './domain/host-guard';
import type { WebhookSender } from './domain/ports';
import { BUS_MAX_ATTEMPTS, WebhookDispatcher } from './domain/webhook-dispatcher';
import { createWebhooksMetrics } from './metrics';

export interface WebhooksOverrides {
  /**
   * How long it keeps serving after it turned not-ready, before it stops listening (Lifecycle, default
   * 500 ms). The all-in-one gives 0: only its gateway is reached from outside, and it drains first.
   */
  drainDelayMs?: number;
  /** The all-in-one's shared in-process bus (or any bus); the service then does not close it. */
  bus?: MessagePublisher & MessageConsumer;
  logger?: Logger;
  registry?: Registry;
  clock?: Clock;
  /** Tests only: a sender other than the SSRF-safe HTTP one. */
  sender?: WebhookSender;
}

export interface WebhooksService {
  start(): Promise<{ port: number; adminPort: number }>;
  stop(): Promise<void>;
  onSignals(graceMs: number): void;
  readonly store: KnexDeliveryStore;
  readonly knex: Knex;
  readonly registry: Registry;
  readonly queue: string;
}

/**
 * The webhooks service's composition root (STYLE H2): database, bus, SSRF-safe sender, dispatcher,
 * admin port. Consumes the SPEC 6 note events from `<WEBHOOK_QUEUE>` (default webhooks.note-events);
 * retries are broker-held delays, so nothing pending lives in this process's memory.
 */
export async function createWebhooksService(config: WebhooksConfig, overrides: WebhooksOverrides = {}): Promise<WebhooksService> {
  const logger = overrides.logger ?? createLogger('webhooks', config.logLevel);
  const registry = overrides.registry ?? createRegistry('webhooks');
  const clock = overrides.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, overrides.drainDelayMs);
  // A database outage is one event in the log (common's DependencyState); any query that answers ends it.
  const outages = new Outages({ logger: logger.child('webhooks/db'), onFailure: dependencyFailureCounter(registry, 'webhooks'), dependencyOf: (err) => (isDatabaseUnavailable(err) ? 'database' : undefined) });
  const knex = configureDatabase(config.databaseUrl, { poolMax: 10, sqliteSynchronous: 'NORMAL', logger: logger.child('webhooks/db'), sslCa: config.databaseSslCa, outage: outages.of('database') });
  knex.on('query-response', () => outages.of('database').answered());
  const store = new KnexDeliveryStore(knex);
  const metrics = createWebhooksMetrics(registry);
  const hosts = new HostGuard({
    concurrency: config.hostConcurrency, maxWaiting: config.hostQueue, failureThreshold: config.circuitFailureThreshold, openMs: config.circuitOpenMs,
  });
  const dispatcher = new WebhookDispatcher({
    eventOpener: new ConsumerOpener(config.privateKeys, WEBHOOK_SEAL_PURPOSE),
    targetOpener: new ConsumerOpener(config.privateKeys, WEBHOOK_TARGET_SEAL_PURPOSE),
    subscriptions: config.subscriptions,
    pseudonymKey: config.pseudonymKey,
    sender: overrides.sender ?? new SafeHttpSender({
      allowPrivateNetworks: config.allowPrivateNetworks, timeoutMs: config.timeoutMs, maxResponseBytes: config.maxResponseBytes,
    }),
    store,
    hosts,
    retryDelaysMs: config.retryDelaysMs,
    circuitDeferMs: config.circuitOpenMs,
    clock,
    logger: logger.child('webhooks/dispatcher'),
    metrics,
  });
  if (config.allowPrivateNetworks) logger.warn('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhooks may reach private addresses (tests and laptops only)');

  let bus: (MessagePublisher & MessageConsumer) | undefined = overrides.bus;
  let ownBus: { close(): Promise<void> } | undefined;
  let subscription: Subscription | undefined;
  let watch: QueueWatch | undefined;
  const timers: NodeJS.Timeout[] = [];

  const watchQueues = async () => {
    metrics.openCircuits(hosts.openCircuits());
    if (!watch) return;
    try {
      const depths = await watch.depths();
      metrics.queueDepth('main', depths.main);
      metrics.queueDepth('dead_letter', depths.deadLetter);
    } catch (err) {
      logger.debug('queue depths unavailable', { err: (err as Error).message });
    }
  };
  const housekeeping = async () => {
    try {
      const pruned = await store.prune(new Date(clock.now().getTime() - config.recordRetentionMs));
      if (pruned > 0) logger.info('old delivery records pruned', { count: pruned });
      if (watch) {
        const swept = await watch.dropDeadLettersOlderThan(new Date(clock.now().getTime() - config.deadLetterRetentionMs));
        if (swept.dropped > 0) logger.info('dead-lettered webhook events past their retention dropped', swept);
      }
    } catch (err) {
      logger.warn('webhook housekeeping failed; retrying at the next round', { err: (err as Error).message });
    }
  };

  const start = async () => {
    await migrateToLatest(knex);
    lifecycle.add('database', () => knex.destroy());
    if (!bus) {
      if (config.amqpUrl) {
        const rabbit = await RabbitMqBus.connect({
          url: config.amqpUrl, tls: config.amqpTls, exchange: config.amqpExchange, queues: config.amqpQueues, logger, registry,
          connectionName: `vanish-webhooks-${process.pid}`, connectLazily: true,
          outage: outages.of('rabbitmq', { logger: logger.child('webhooks/bus'), counting: 'reconnect attempts failed' }),
        });
        bus = rabbit;
        ownBus = rabbit;
        if (!(await rabbit.waitUntilConnected(5_000))) logger.warn('RabbitMQ unreachable at start; consuming once it is back');
        watch = new RabbitMqQueueWatch({ url: config.amqpUrl, tls: config.amqpTls, queue: config.queue, connectionName: `vanish-webhooks-watch-${process.pid}` });
      } else {
        const local = new InProcessBus({ logger, registry });
        bus = local;
        ownBus = local;
        logger.warn('AMQP_URL is not set and no bus was injected: the webhooks service receives no events');
      }
    }
    if (ownBus) lifecycle.add('bus', () => ownBus!.close());
    subscription = await bus.consume({
      queue: config.queue,
      bindings: [...WEBHOOK_EVENT_NAMES, REQUEST_SUBMITTED_EVENT],
      prefetch: config.prefetch,
      maxAttempts: BUS_MAX_ATTEMPTS,
      retryDelaysMs: config.retryDelaysMs,
    }, (message) => dispatcher.handle(message));
    lifecycle.add('consumer', () => subscription!.cancel());
    timers.push(setInterval(() => void watchQueues(), config.queueWatchIntervalMs), setInterval(() => void housekeeping(), 3_600_000));
    for (const timer of timers) timer.unref();
    lifecycle.add('timers', async () => { for (const timer of timers) clearInterval(timer); });
    void watchQueues();

    const admin = createAdminApp({
      registry,
      checks: [{ name: 'database', check: () => store.ping() }],
      isDraining: () => lifecycle.isDraining,
      logger: logger.child('webhooks/admin'),
    });
    const adminServer = await listen(admin, config.adminPort, config.host, undefined, ADMIN_LISTEN);
    lifecycle.add('admin server', () => adminServer.close());
    logger.info('webhooks service started', { adminPort: adminServer.port, queue: config.queue, subscriptions: config.subscriptions.length });
    return { port: adminServer.port, adminPort: adminServer.port };
  };

  return {
    start,
    stop: () => lifecycle.stop(),
    onSignals: (graceMs) => lifecycle.onSignals(graceMs),
    store,
    knex,
    registry,
    queue: config.queue,
  };
}
