import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp, { type ChannelModel } from 'amqplib';
import { silentLogger, type MessageConsumer, type MessagePublisher } from '@vanish/common';
import { HeartbeatPublisher, InProcessBus, RabbitMqBus, dlqName, dlxName, retryQueueName } from '@vanish/bus';
import { createTestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { createStatsService, loadStatsConfig, type StatsModule } from '../src';
import { countersOf, fetchStats, shuffled, syntheticStream, toMessage } from './support/synthetic-events';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const HEARTBEAT_MS = 400;

interface Setup {
  name: string;
  make(): Promise<{
    env: Record<string, string>;
    bus?: MessagePublisher & MessageConsumer;
    publisher: MessagePublisher;
    deadLetters(queue: string): Promise<string[]>;
    cleanup(): Promise<void>;
  }>;
}

const setups: Setup[] = [
  {
    name: 'RabbitMQ and MariaDB',
    make: async () => {
      await requireService('rabbitmq');
      const db = await createTestDatabase('vanish_stats');
      const tag = randomBytes(4).toString('hex');
      const exchange = `test.stats.${tag}`;
      const prefix = `test.${tag}.`;
      const publisher = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
      const admin: ChannelModel = await amqp.connect(AMQP_URL);
      admin.on('error', () => undefined);
      const channel = await admin.createChannel();
      return {
        env: { DATABASE_URL: db.url, AMQP_URL, AMQP_EXCHANGE: exchange, AMQP_QUEUE_PREFIX: prefix },
        publisher,
        deadLetters: async (queue) => {
          const bodies: string[] = [];
          for (let got = await channel.get(dlqName(`${prefix}${queue}`), { noAck: true }); got; got = await channel.get(dlqName(`${prefix}${queue}`), { noAck: true })) {
            bodies.push(got.content.toString('utf8'));
          }
          return bodies;
        },
        cleanup: async () => {
          await publisher.close();
          for (const q of ['stats.note-events', 'stats.heartbeats']) {
            for (const name of [q, dlqName(q), ...[200, 1000, 5000, 30000].map((d) => retryQueueName(q, d))]) {
              await channel.deleteQueue(`${prefix}${name}`).catch(() => undefined);
            }
          }
          await channel.deleteExchange(exchange).catch(() => undefined);
          await channel.deleteExchange(dlxName(exchange)).catch(() => undefined);
          await admin.close();
          await db.drop();
        },
      };
    },
  },
  {
    name: 'the in-process bus and SQLite (the all-in-one embedded default)',
    make: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vanish-stats-'));
      const bus = new InProcessBus();
      return {
        env: { DATA_DIR: dir },
        bus,
        publisher: bus,
        deadLetters: async (queue) => bus.deadLetters(queue).map((d) => d.message.body),
        cleanup: async () => {
          await bus.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

describe.each(setups)('stats service on $name', ({ make }) => {
  let env: Awaited<ReturnType<Setup['make']>>;
  let service: StatsModule;
  let port: number;
  let adminPort: number;

  beforeAll(async () => {
    env = await make();
    const config = loadStatsConfig({ ...env.env, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS), LOG_LEVEL: 'silent' });
    service = await createStatsService(config, { logger: silentLogger, bus: env.bus });
    ({ port, adminPort } = await service.start());
  }, 30_000);

  afterAll(async () => {
    await service?.stop();
    await env?.cleanup();
  });

  const metric = async (pattern: RegExp): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    return text.split('\n').filter((line) => pattern.test(line)).reduce((n, line) => n + Number(line.split(' ').pop()), 0);
  };

  it('when a stream of note events arrives in any order, then every counter, window and success_rate is exact; duplicates change nothing', async () => {
    const { events, expected } = syntheticStream(150, Date.now(), 11);
    await env.publisher.publish(shuffled(events, 3).map(toMessage));
    const stats = await waitFor(async () => {
      const s = await fetchStats(port);
      return s.total_notes_created === expected.total_notes_created && s.destroyed_notes === expected.destroyed_notes ? s : undefined;
    }, { description: 'all events counted', timeoutMs: 30_000, intervalMs: 100 });
    expect(countersOf(stats)).toEqual(expected);
    expect(stats.generated_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    // Every event delivered a second time (the outbox's duplicate after a crash looks exactly like this).
    const duplicatesBefore = await metric(/^stats_events_consumed_total\{.*outcome="duplicate"/);
    await env.publisher.publish(events.map(toMessage));
    await waitFor(async () => (await metric(/^stats_events_consumed_total\{.*outcome="duplicate"/)) - duplicatesBefore >= events.length,
      { description: 'duplicates consumed', timeoutMs: 30_000, intervalMs: 100 });
    expect(countersOf(await fetchStats(port))).toEqual(expected);
  }, 60_000);

  it('when a malformed message arrives, then it goes to the dead-letter queue and consumption goes on', async () => {
    const before = await fetchStats(port);
    await env.publisher.publish([{ id: `bad-${randomBytes(4).toString('hex')}`, routingKey: 'note.created', body: '{"this is": not json' }]);
    const { events } = syntheticStream(1, Date.now(), 99);
    await env.publisher.publish([toMessage(events[0])]);
    await waitFor(async () => (await fetchStats(port)).total_notes_created === before.total_notes_created + 1, { description: 'the next event counted' });
    const dead = await waitFor(async () => { const d = await env.deadLetters('stats.note-events'); return d.length > 0 ? d : undefined; }, { description: 'dead letter' });
    expect(dead).toEqual(['{"this is": not json']);
  });

  it('when heartbeats stop, then health_status reports it within three periods, and healthy again once they resume', async () => {
    let database = 'healthy';
    const notes = new HeartbeatPublisher({
      publisher: env.publisher, service: 'notes', instance: 'n1', intervalMs: HEARTBEAT_MS, logger: silentLogger,
      probe: async () => ({ database, encryption: 'available' }),
    });
    const mailer = new HeartbeatPublisher({
      publisher: env.publisher, service: 'mailer', instance: 'm1', intervalMs: HEARTBEAT_MS, logger: silentLogger,
      probe: async () => ({ email: 'not_configured' }),
    });
    notes.start();
    mailer.start();
    try {
      await waitFor(async () => {
        const h = (await fetchStats(port)).health_status;
        return h.database === 'healthy' && h.encryption === 'available' && h.email === 'not_configured';
      }, { description: 'healthy', timeoutMs: 10_000 });

      // The notes database is cut: its heartbeat says so.
      database = 'unhealthy';
      await waitFor(async () => (await fetchStats(port)).health_status.database === 'unhealthy', { description: 'database unhealthy', timeoutMs: 10_000 });
      database = 'healthy';
      await waitFor(async () => (await fetchStats(port)).health_status.database === 'healthy', { description: 'database healthy again', timeoutMs: 10_000 });

      // The notes service goes silent: reported within three periods (plus the polling step).
      await notes.stop();
      const stoppedAt = Date.now();
      await waitFor(async () => {
        const h = (await fetchStats(port)).health_status;
        return h.database === 'unhealthy' && h.encryption === 'unavailable';
      }, { description: 'silence noticed', timeoutMs: 10_000, intervalMs: 25 });
      expect(Date.now() - stoppedAt).toBeLessThanOrEqual(3 * HEARTBEAT_MS + 250);
      expect((await fetchStats(port)).health_status.email).toBe('not_configured');

      notes.start();
      await waitFor(async () => {
        const h = (await fetchStats(port)).health_status;
        return h.database === 'healthy' && h.encryption === 'available';
      }, { description: 'healthy after resuming', timeoutMs: 10_000 });
    } finally {
      await notes.stop();
      await mailer.stop();
    }
  }, 40_000);
});
