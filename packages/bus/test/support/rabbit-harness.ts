import { randomBytes } from 'node:crypto';
import amqp, { type ChannelModel } from 'amqplib';
import { silentLogger } from '@vanish/common';
import { HEADER_DEAD_REASON, HEADER_ROUTING_KEY, RabbitMqBus, dlqName, dlxName, retryQueueName, type RabbitMqBusOptions } from '@vanish/bus';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { requireService } from '@vanish/testkit/services';
import { CONTRACT_RETRY_DELAYS_MS, type BusHarness } from '../contract/bus.contract';

export const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** Deletes a file's queues and exchanges; each delete on its own channel so one failure cannot stop the rest. */
export async function deleteTopology(admin: ChannelModel, exchange: string, queues: Iterable<string>): Promise<void> {
  const names = [...queues].flatMap((q) => [q, dlqName(q), ...CONTRACT_RETRY_DELAYS_MS.map((d) => retryQueueName(q, d))]);
  for (const name of names) {
    const channel = await admin.createChannel();
    channel.on('error', () => undefined);
    await channel.deleteQueue(name).catch(() => undefined);
    await channel.close().catch(() => undefined);
  }
  for (const name of [exchange, dlxName(exchange)]) {
    const channel = await admin.createChannel();
    channel.on('error', () => undefined);
    await channel.deleteExchange(name).catch(() => undefined);
    await channel.close().catch(() => undefined);
  }
}

/** The bus contract's harness for RabbitMqBus, through a fault proxy, with the bus options given. */
export function rabbitHarness(usedQueues: Set<string>, options: Partial<RabbitMqBusOptions> = {}): () => Promise<BusHarness> {
  return async () => {
  await requireService('rabbitmq');
  const exchange = `test.contract.${randomBytes(4).toString('hex')}`;
  const proxy: FaultProxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 });
  const admin = await amqp.connect(AMQP_URL);
  admin.on('error', () => undefined);
  const adminChannel = await admin.createChannel();
  const bus = await RabbitMqBus.connect({
    url: `amqp://guest:guest@127.0.0.1:${proxy.port}`, exchange, logger: silentLogger,
    reconnectInitialDelayMs: 50, reconnectMaxDelayMs: 500, confirmTimeoutMs: 3_000, ...options,
  });
  return {
    bus,
    deadLetters: async (queue) => {
      const found = [];
      for (;;) {
        const got = await adminChannel.get(dlqName(queue), { noAck: true });
        if (!got) break;
        const headers = got.properties.headers ?? {};
        found.push({
          id: got.properties.messageId ?? '',
          routingKey: String(headers[HEADER_ROUTING_KEY] ?? got.fields.routingKey),
          body: got.content.toString('utf8'),
          reason: String(headers[HEADER_DEAD_REASON]),
        });
      }
      return found;
    },
    publishWithoutId: async (routingKey, body) => {
      const channel = await admin.createConfirmChannel();
      channel.publish(exchange, routingKey, Buffer.from(body), { persistent: true });
      await channel.waitForConfirms();
      await channel.close();
    },
    cut: async () => proxy.cut(),
    restore: async () => proxy.restore(),
    cleanup: async () => {
      await bus.close();
      await proxy.close();
      await deleteTopology(admin, exchange, usedQueues);
      await admin.close();
    },
  };
  };
}
