import { randomBytes, randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import amqp, { type ChannelModel } from 'amqplib';
import { silentLogger, type OutgoingMessage } from '@vanish/common';
import { RabbitMqBus, coalesceFrameWrites, dlqName, dlxName } from '@vanish/bus';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const MESSAGES = 200;

/**
 * Counts the writes that reach the socket layer on connections to the broker's port (each one a send
 * syscall): net.Socket hands a write to the kernel through _writeGeneric, a corked batch included.
 */
function countBrokerWrites(): { readonly count: number; restore(): void } {
  const proto = Socket.prototype as unknown as { _writeGeneric: (...args: unknown[]) => unknown };
  const original = proto._writeGeneric;
  const counter = { count: 0, restore: () => { proto._writeGeneric = original; } };
  proto._writeGeneric = function counted(this: Socket, ...args: unknown[]) {
    if (this.remotePort === 5672) counter.count += 1;
    return original.apply(this, args);
  };
  return counter;
}

describe('RabbitMqBus frame write coalescing (real RabbitMQ)', () => {
  let bus: RabbitMqBus;
  let admin: ChannelModel;
  const exchange = `test.coalesce.${randomBytes(4).toString('hex')}`;
  const queue = `test.coalesce.${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    await requireService('rabbitmq');
    admin = await amqp.connect(AMQP_URL);
    bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
  });

  afterAll(async () => {
    await bus?.close();
    if (admin) {
      const channel = await admin.createChannel();
      for (const name of [queue, dlqName(queue)]) await channel.deleteQueue(name).catch(() => undefined);
      for (const name of [exchange, dlxName(exchange)]) await channel.deleteExchange(name).catch(() => undefined);
      await admin.close();
    }
  });

  it('when a batch is published and then consumed, then its frames and acks leave in a few writes, not one each', async () => {
    const received: string[] = [];
    const subscription = await bus.consume({ queue, bindings: ['coalesce.*'], prefetch: MESSAGES }, async (message) => {
      received.push(message.id);
    });
    const messages: OutgoingMessage[] = Array.from({ length: MESSAGES }, (_, i) => ({
      id: randomUUID(), routingKey: 'coalesce.test', body: JSON.stringify({ i }),
    }));

    const publishWrites = countBrokerWrites();
    try {
      await bus.publish(messages);
    } finally {
      publishWrites.restore();
    }
    // Uncoalesced, amqplib writes every message (method, header and body frame) on its own.
    expect(publishWrites.count).toBeLessThan(MESSAGES / 10);

    const ackWrites = countBrokerWrites();
    try {
      await waitFor(() => received.length === MESSAGES, { timeoutMs: 10_000, description: 'all messages consumed' });
      // Every handler resolved: the acks are queued; let the multiplexer's round run.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      ackWrites.restore();
    }
    expect(ackWrites.count).toBeLessThan(MESSAGES / 4);
    await subscription.cancel();
    // Nothing was lost to coalescing: every message was acked (none comes back on a new consumer).
    const channel = await admin.createChannel();
    const { messageCount } = await channel.checkQueue(queue);
    await channel.close();
    expect(messageCount).toBe(0);
    expect(new Set(received)).toEqual(new Set(messages.map((m) => m.id)));
  });

  it('when amqplib internals are not the expected shape, then nothing is patched', () => {
    expect(coalesceFrameWrites({} as ChannelModel)).toBe(false);
    expect(coalesceFrameWrites({ connection: { stream: {}, muxer: {} } } as unknown as ChannelModel)).toBe(false);
  });
});
