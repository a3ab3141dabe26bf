import {
  Lifecycle, Outages, createAdminApp, dependencyFailureCounter, createLogger, createRegistry, PUBLIC_LISTEN, ADMIN_LISTEN, listen, systemClock,
  type Clock, type Logger, type MessageConsumer, type MessagePublisher,
} from '@vanish/common';
import { InProcessBus, RabbitMqBus } from '@vanish/bus';
import type { Knex } from 'knex';
import type { Registry } from 'prom-client';
import { configureKnex, isDatabaseUnavailable } from './adapters/db/configure-knex';
import { KnexStatsStore } from './adapters/db/knex-stats-store';
import { migrateToLatest } from './adapters/db/migrate';
import type { StatsConfig } from './config';
import { HeartbeatConsumer } from './consumers/heartbeat-consumer';
import { NoteEventsConsumer } from './consumers/note-events-consumer';
import { StatsPruner } from './domain/stats-pruner';
import { StatsService } from './domain/stats-service';
import { createStatsApp } from './http/create-stats-app';
import { createStatsMetrics } from './stats-metrics';

export interface StatsOverrides {
  /**
   * How long it keeps serving after it turned not-ready, before it stops listening (Lifecycle, default
   * 500 ms). The all-in-one gives 0: only its gateway is reached from outside, and it drains first.
   */
  drainDelayMs?: number;
  /** The all-in-one's shared in-process bus (or any bus); the stats service then does not close it. */
  bus?: MessagePublisher & MessageConsumer;
  logger?: Logger;
  registry?: Registry;
  clock?: Clock;
}

export interface StatsModule {
  start(): Promise<{ port: number; adminPort: number }>;
  stop(): Promise<void>;
  readonly stats: StatsService;
  readonly store: KnexStatsStore;
  readonly knex: Knex;
  readonly registry: Registry;
  readonly noteEventsQueue: string;
  readonly heartbeatsQueue: string;
}

/**
 * The stats service's composition root (STYLE H2): picks the database and the bus from the
 * config, wires store → service → consumers → HTTP, and owns the start/stop order.
 */
export async function createStatsService(config: StatsConfig, overrides: StatsOverrides = {}): Promise<StatsModule> {
  const logger = overrides.logger ?? createLogger('stats', config.logLevel);
  const registry = overrides.registry ?? createRegistry('stats');
  const clock = overrides.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, overrides.drainDelayMs);
  // A database outage is one event in the log (common's DependencyState); any query that answers ends it.
  const outages = new Outages({ logger: logger.child('stats/db'), onFailure: dependencyFailureCounter(registry, 'stats'), dependencyOf: (err) => (isDatabaseUnavailable(err) ? 'database' : undefined) });
  const knex = configureKnex(config.databaseUrl, { logger: logger.child('stats/db'), sslCa: config.databaseSslCa, outage: outages.of('database') });
  knex.on('query-response', () => outages.of('database').answered());
  const store = new KnexStatsStore(knex);
  const stats = new StatsService({ store, clock, heartbeatIntervalMs: config.heartbeatIntervalMs });
  const metrics = createStatsMetrics(registry);
  const pruner = new StatsPruner({
    store, clock, logger: logger.child('stats/pruner'), eventIdRetentionHours: config.eventIdRetentionHours, intervalMs: config.pruneIntervalMs,
  });

  let bus: (MessagePublisher & MessageConsumer) | undefined = overrides.bus;
  let ownBus: { close(): Promise<void>; ping?: () => Promise<boolean> } | undefined;
  const consumers: Array<NoteEventsConsumer | HeartbeatConsumer> = [];

  const start = async () => {
    await migrateToLatest(knex);
    if (!bus) {
      if (config.amqpUrl) {
        const rabbit = await RabbitMqBus.connect({
          url: config.amqpUrl, tls: config.amqpTls, exchange: config.amqpExchange, queues: config.amqpQueues, logger, registry, connectionName: `vanish-stats-${process.pid}`, connectLazily: true,
          outage: outages.of('rabbitmq', { logger: logger.child('stats/bus'), counting: 'reconnect attempts failed' }),
        });
        bus = rabbit;
        ownBus = rabbit;
        // Start with the queues declared when the broker is there; when it is not, serve the API
        // anyway (counters are in the database) and let the bus catch up when the broker returns.
        if (!(await rabbit.waitUntilConnected(5_000))) logger.warn('RabbitMQ unreachable at start; consuming once it is back');
      } else {
        const local = new InProcessBus({ logger, registry });
        bus = local;
        ownBus = local;
        logger.warn('AMQP_URL is not set and no bus was injected: stats receives no events and reports zero counters and unhealthy components');
      }
    }
    lifecycle.add('database', () => knex.destroy());
    if (ownBus) lifecycle.add('bus', () => ownBus?.close());
    const common = { consumer: bus, store, clock, logger, metrics, queuePrefix: config.queuePrefix };
    consumers.push(new NoteEventsConsumer(common), new HeartbeatConsumer(common));
    for (const consumer of consumers) {
      await consumer.start();
      lifecycle.add(consumer.queueName, () => consumer.stop());
    }
    pruner.start();
    lifecycle.add('pruner', () => pruner.stop());

    const app = createStatsApp({ stats, logger: logger.child('stats/http'), registry, outages });
    const admin = createAdminApp({
      registry,
      checks: [{ name: 'database', check: () => store.ping() }],
      isDraining: () => lifecycle.isDraining,
      logger: logger.child('stats/admin'),
    });
    const adminServer = await listen(admin, config.adminPort, config.host, undefined, ADMIN_LISTEN);
    lifecycle.add('admin server', () => adminServer.close());
    const publicServer = await listen(app, config.port, config.host, undefined, PUBLIC_LISTEN);
    lifecycle.add('public server', () => publicServer.close());
    logger.info('stats service started', { port: publicServer.port, adminPort: adminServer.port, bus: ownBus ? (config.amqpUrl ? 'rabbitmq' : 'none') : 'injected' });
    return { port: publicServer.port, adminPort: adminServer.port };
  };

  return {
    start,
    stop: () => lifecycle.stop(),
    stats,
    store,
    knex,
    registry,
    get noteEventsQueue() { return `${config.queuePrefix}stats.note-events`; },
    get heartbeatsQueue() { return `${config.queuePrefix}stats.heartbeats`; },
  };
}
