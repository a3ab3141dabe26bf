import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { ConsumerSealer, KeyRing, MAIL_SEAL_PURPOSE, MessageSealer, publicRingOf, silentLogger, type MailCommand, type Registry } from '@vanish/common';
import { RabbitMqBus, dlqName, dlxName } from '@vanish/bus';
import { requireService } from '@vanish/testkit/services';

export const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A per-test-file RabbitMQ world: own exchange and queue names, a publisher playing the notes
 * service's relay, a raw "tap" queue that sees what the broker carries, and cleanup.
 */
export async function startBroker(prefix: string) {
  await requireService('rabbitmq');
  const id = randomBytes(4).toString('hex');
  const exchange = `test.${prefix}.${id}`;
  const queue = `test.${prefix}.${id}.mail-commands`;
  const tap = `${queue}.tap`;
  // The mailer's private ring (notes seals to its public half) and the legacy symmetric ring of
  // commands sealed before the migration (DECISIONS 1).
  const privateRing = KeyRing.generate('x1');
  const sealer = new ConsumerSealer(publicRingOf(privateRing), MAIL_SEAL_PURPOSE);
  const ring = KeyRing.generate('m1');
  const legacySealer = new MessageSealer(ring, MAIL_SEAL_PURPOSE);
  const admin: ChannelModel = await amqp.connect(AMQP_URL);
  admin.on('error', () => undefined);
  const channel: Channel = await admin.createChannel();
  channel.on('error', () => undefined);
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(tap, { durable: false, autoDelete: false });
  await channel.bindQueue(tap, exchange, 'mail.send');
  await channel.bindQueue(tap, exchange, 'health.*');
  // Stands in for the stats service's queue: the relay's mandatory publishes need every event routed.
  await channel.bindQueue(tap, exchange, 'note.*');
  const publisher = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
  const dataDir = mkdtempSync(join(tmpdir(), `${prefix}-`));

  return {
    exchange, queue, ring, privateRing, dataDir, channel,
    /** Publishes a command as notes does: sealed to the mailer, or (`legacy`) under MAIL_KEYS as before the migration. */
    async publish(command: MailCommand, id = randomUUID(), how: 'to-mailer' | 'legacy' = 'to-mailer'): Promise<string> {
      const sealed = (how === 'legacy' ? legacySealer : sealer).seal(JSON.stringify(command));
      const body = JSON.stringify({ id, event: 'mail.send', version: 1, timestamp: new Date().toISOString(), sealed });
      await publisher.publish([{ id, routingKey: 'mail.send', body }]);
      return id;
    },
    /** Everything the tap queue holds (raw, as the broker carries it), removed from the tap. */
    async drainTap(): Promise<amqp.GetMessage[]> {
      const got: amqp.GetMessage[] = [];
      for (;;) {
        const message = await channel.get(tap, { noAck: true });
        if (!message) return got;
        got.push(message);
      }
    },
    /** Everything in the dead-letter queue, removed; [] while it does not exist yet. */
    async drainDlq(): Promise<amqp.GetMessage[]> {
      const got: amqp.GetMessage[] = [];
      const c = await admin.createChannel();
      c.on('error', () => undefined);
      try {
        for (;;) {
          const message = await c.get(dlqName(queue), { noAck: true });
          if (!message) return got;
          got.push(message);
        }
      } catch {
        return got;
      } finally {
        await c.close().catch(() => undefined);
      }
    },
    /** Messages ready in a queue; -1 while it does not exist (a failed check closes its channel, so each gets its own). */
    async messagesIn(name: string): Promise<number> {
      const c = await admin.createChannel();
      c.on('error', () => undefined);
      try {
        return (await c.checkQueue(name)).messageCount;
      } catch {
        return -1;
      } finally {
        await c.close().catch(() => undefined);
      }
    },
    env(extra: Record<string, string> = {}): Record<string, string> {
      return {
        DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'mailer.db')}`, AMQP_URL, AMQP_EXCHANGE: exchange,
        MAIL_QUEUE: queue, MAIL_PRIVATE_KEYS: privateRing.serialize(), MAIL_KEYS: ring.serialize(), PUBLIC_BASE_URL: 'https://vanish.test', PORT: '0', ADMIN_PORT: '0',
        MAIL_RETRY_INITIAL_DELAY_MS: '1000', MAIL_RETRY_MAX_DELAY_MS: '2000', SMTP_TIMEOUT_MS: '2000',
        HEARTBEAT_INTERVAL_MS: '200', LOG_LEVEL: 'silent', ...extra,
      };
    },
    async close(retryDelaysMs: number[] = [500, 1000, 1500, 2000]): Promise<void> {
      await publisher.close();
      const names = [tap, queue, dlqName(queue), ...retryDelaysMs.map((d) => `${queue}.retry.${d}`)];
      for (const name of names) {
        const c = await admin.createChannel();
        c.on('error', () => undefined);
        await c.deleteQueue(name).catch(() => undefined);
        await c.close().catch(() => undefined);
      }
      for (const name of [exchange, dlxName(exchange)]) {
        const c = await admin.createChannel();
        c.on('error', () => undefined);
        await c.deleteExchange(name).catch(() => undefined);
        await c.close().catch(() => undefined);
      }
      await admin.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type Broker = Awaited<ReturnType<typeof startBroker>>;

/** Sum of a counter's values (all labels), e.g. mailer_emails_failed_total. */
export async function counter(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
