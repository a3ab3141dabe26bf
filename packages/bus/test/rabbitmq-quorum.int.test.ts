import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import amqp from 'amqplib';
import { PermanentMessageFailure, silentLogger, type IncomingMessage } from '@vanish/common';
import { CLASSIC_QUEUES, RabbitMqBus, declareTopology, dlqName, type ExpiringMessage, type QueueSettings } from '@vanish/bus';
import { startFaultProxy } from '@vanish/testkit/fault-proxy';
import { freePort, waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { busContractTests } from './contract/bus.contract';
import { AMQP_URL, deleteTopology, rabbitHarness } from './support/rabbit-harness';

// The whole contract again, on quorum queues (the production default): retries through quorum
// retry queues with a message TTL, dead letters through at-least-once dead-lettering.
const usedQueues = new Set<string>();
busContractTests('RabbitMqBus on quorum queues', rabbitHarness(usedQueues, { queues: { type: 'quorum', deliveryLimit: 5 } }), usedQueues);

const names = (kind: string) => ({
  exchange: `test.quorum-${kind}.${randomBytes(4).toString('hex')}`,
  queue: `quorum.${kind}.${randomBytes(3).toString('hex')}`,
});

async function withAdmin<T>(work: (admin: amqp.ChannelModel) => Promise<T>): Promise<T> {
  await requireService('rabbitmq');
  const admin = await amqp.connect(AMQP_URL);
  admin.on('error', () => undefined);
  try {
    return await work(admin);
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** A bus on an exchange and queue names of the test's own; closed, and what it declared deleted, afterwards. */
async function withBus(kind: string, queues: QueueSettings, work: (bus: RabbitMqBus, names: { exchange: string; queue: string }) => Promise<void>): Promise<void> {
  await requireService('rabbitmq');
  const { exchange, queue } = names(kind);
  const bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger, queues });
  try {
    await work(bus, { exchange, queue });
  } finally {
    await bus.close();
    await withAdmin((admin) => deleteTopology(admin, exchange, [queue]));
  }
}

describe('declareTopology with quorum queues', () => {
  it('when the topology is declared, then the consumer queue is a quorum queue (declaring it classic is refused) and declaring again is harmless', async () => {
    const { exchange, queue } = names('type');
    await withAdmin(async (admin) => {
      try {
        const topology = { exchange, consumers: [{ queue, bindings: ['note.*'], retryDelaysMs: [100] }], settings: { type: 'quorum' as const, deliveryLimit: 3 } };
        await declareTopology(admin, topology);
        await declareTopology(admin, topology);
        const classic = await admin.createChannel();
        classic.on('error', () => undefined);
        await expect(classic.assertQueue(queue, { durable: true })).rejects.toThrow(/PRECONDITION_FAILED/);
      } finally {
        await deleteTopology(admin, exchange, [queue]);
      }
    });
  });

  it('when a message is given back more often than the delivery limit (a poison message that kills its consumers), then the broker moves it to <queue>.dlq', async () => {
    const { exchange, queue } = names('poison');
    await withAdmin(async (admin) => {
      try {
        await declareTopology(admin, { exchange, consumers: [{ queue, bindings: ['poison.*'] }], settings: { type: 'quorum', deliveryLimit: 2 } });
        const channel = await admin.createConfirmChannel();
        channel.publish(exchange, 'poison.x', Buffer.from('{}'), { persistent: true, messageId: 'poison-1' });
        await channel.waitForConfirms();
        let taken = 0;
        let dead: amqp.GetMessage | false = false;
        await waitFor(async () => {
          const got = await channel.get(queue, { noAck: false });
          if (got) {
            taken += 1;
            channel.nack(got, false, true);
          }
          dead = await channel.get(dlqName(queue), { noAck: true });
          return dead !== false;
        }, { timeoutMs: 30_000, intervalMs: 50 });
        expect((dead as unknown as amqp.GetMessage).properties.messageId).toBe('poison-1');
        expect(taken).toBe(3); // the first delivery and two redeliveries
        expect(await channel.get(queue, { noAck: true })).toBe(false);
      } finally {
        await deleteTopology(admin, exchange, [queue]);
      }
    });
  });
});

describe.each([['classic' as const], ['quorum' as const]])('RabbitMqBus on %s queues: expiring messages', (type) => {
  it('when a message carries expiresInMs and waits longer than that on a disposable queue, then the broker drops it and nothing reaches <queue>.dlq (heartbeats rely on this)', async () => {
    await withBus(`expiry-${type}`, { type }, async (bus, { queue }) => {
      const subscription = await bus.consume({ queue, bindings: ['exp.*'], disposable: true }, async () => undefined);
      await subscription.cancel(); // the queue exists, nobody consumes
      await bus.publish([{ id: 'short', routingKey: 'exp.x', body: '{}', expiresInMs: 100 } as ExpiringMessage, { id: 'kept', routingKey: 'exp.x', body: '{}' }]);
      await withAdmin(async (admin) => {
        const channel = await admin.createChannel();
        // A classic queue drops an expired message when it reaches the head: take the head's turn by reading.
        await sleep(300);
        const head = await channel.get(queue, { noAck: false });
        expect(head && head.properties.messageId).toBe('kept');
        if (head) channel.nack(head, false, true);
        await waitFor(async () => (await channel.checkQueue(queue)).messageCount === 1, { timeoutMs: 10_000, description: 'the expired message dropped' });
        await sleep(500); // dead-lettering, were it to happen, is asynchronous
        expect((await channel.checkQueue(dlqName(queue))).messageCount).toBe(0);
      });
    });
  });

  it('when a disposable queue exists from before with dead-lettering, then the bus replaces it (what it held is worthless) and consumes from the new one; a refused message still reaches <queue>.dlq', async () => {
    await requireService('rabbitmq');
    const { exchange, queue } = names(`replace-${type}`);
    try {
      await withAdmin(async (admin) => {
        await declareTopology(admin, { exchange, consumers: [{ queue, bindings: ['old.*'] }], settings: { type } });
        const channel = await admin.createConfirmChannel();
        channel.publish(exchange, 'old.x', Buffer.from('{}'), { persistent: true, messageId: 'stale', expiration: '100' });
        await channel.waitForConfirms();
        await sleep(300);
        await channel.get(queue, { noAck: true }); // the classic queue expires it at the head: dead-lettered, as before
        await waitFor(async () => (await channel.checkQueue(dlqName(queue))).messageCount === 1, { timeoutMs: 10_000, description: 'the old queue dead-letters what expires' });
        await channel.purgeQueue(dlqName(queue));
        await channel.close();
      });
      const logged: string[] = [];
      const logger = { ...silentLogger, child: () => logger, warn: (msg: string) => { logged.push(msg); } };
      const bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger, queues: { type } });
      const received: IncomingMessage[] = [];
      try {
        await bus.consume({ queue, bindings: ['new.*'], disposable: true, maxAttempts: 1 }, async (m) => {
          received.push(m);
          if (m.id === 'refused') throw new PermanentMessageFailure('malformed');
        });
        expect(logged).toContain('disposable queue declared anew: it had other arguments');
        await bus.publish([{ id: 'fresh', routingKey: 'new.x', body: '{}' }, { id: 'refused', routingKey: 'new.x', body: '{}' }]);
        await waitFor(() => received.length === 2, { timeoutMs: 10_000, description: 'both delivered from the new queue' });
        await withAdmin(async (admin) => {
          const channel = await admin.createChannel();
          await waitFor(async () => (await channel.checkQueue(dlqName(queue))).messageCount === 1, { timeoutMs: 10_000, description: 'the refused one dead-lettered' });
        });
      } finally {
        await bus.close();
      }
      // Declared again at deploy time with the same shape: nothing to replace.
      await withAdmin(async (admin) => declareTopology(admin, { exchange, consumers: [{ queue, bindings: ['new.*'], disposable: true }], settings: { type } }));
    } finally {
      await withAdmin((admin) => deleteTopology(admin, exchange, [queue]));
    }
  });
  it('when an old-shaped disposable queue is still consumed by an older replica, then a new bus consumes from it as it is (nothing deleted under a consumer), and replaces it once the older one is gone', async () => {
    await requireService('rabbitmq');
    const { exchange, queue } = names(`in-use-${type}`);
    try {
      await withAdmin(async (admin) => {
        await declareTopology(admin, { exchange, consumers: [{ queue, bindings: ['beat.*'] }], settings: { type } });
        const older = await admin.createChannel();
        const { consumerTag } = await older.consume(queue, () => undefined, { noAck: true });
        const newer = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger, queues: { type } });
        try {
          const received: IncomingMessage[] = [];
          await newer.consume({ queue, bindings: ['beat.*'], disposable: true }, async (m) => { received.push(m); });
          await newer.publish(Array.from({ length: 4 }, (_, k) => ({ id: `b${k}`, routingKey: 'beat.x', body: '{}' })));
          await waitFor(() => received.length > 0, { timeoutMs: 10_000, description: 'the newer bus shares the old queue' });
          await older.cancel(consumerTag);
        } finally {
          await newer.close();
        }
        // The next start finds the queue unused and replaces it.
        const again = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger, queues: { type } });
        try {
          await again.consume({ queue, bindings: ['beat.*'], disposable: true }, async () => undefined);
          const probe = await admin.createChannel();
          probe.on('error', () => undefined);
          // Declaring it with dead-lettering is now refused: the queue has the disposable shape.
          await expect(probe.assertQueue(queue, { durable: true, arguments: { 'x-dead-letter-exchange': `${exchange}.dlx`, 'x-dead-letter-routing-key': dlqName(queue), ...(type === 'quorum' ? { 'x-queue-type': 'quorum' } : {}) } })).rejects.toThrow(/PRECONDITION_FAILED/);
        } finally {
          await again.close();
        }
      });
    } finally {
      await withAdmin((admin) => deleteTopology(admin, exchange, [queue]));
    }
  });

  it('when the queue under a consumer is deleted (the broker cancels the consumer), then the bus subscribes again and consumes what comes next', async () => {
    await withBus(`cancel-${type}`, { type }, async (bus, { queue }) => {
      const received: IncomingMessage[] = [];
      await bus.consume({ queue, bindings: ['c.*'] }, async (m) => { received.push(m); });
      await withAdmin(async (admin) => {
        const channel = await admin.createChannel();
        await channel.deleteQueue(queue);
        await channel.close();
      });
      await waitFor(async () => {
        await bus.publish([{ id: `after-${randomBytes(3).toString('hex')}`, routingKey: 'c.x', body: '{}' }]).catch(() => undefined);
        return received.length > 0;
      }, { timeoutMs: 15_000, intervalMs: 500, description: 'consuming again after the broker cancelled the consumer' });
    });
  });
});

describe('RabbitMqBus when a consume is refused', () => {
  it('when the broker refuses the consume itself (an exclusive consumer holds the queue), then consume() rejects and nothing consumes for it later, even once the queue is free', async () => {
    await withBus('refused', CLASSIC_QUEUES, async (bus, { exchange, queue }) => {
      const received: IncomingMessage[] = [];
      await withAdmin(async (admin) => {
        await declareTopology(admin, { exchange, consumers: [{ queue, bindings: ['r.*'] }], settings: { type: 'classic' } });
        const holder = await admin.createChannel();
        const { consumerTag } = await holder.consume(queue, () => undefined, { exclusive: true, noAck: false });
        await expect(bus.consume({ queue, bindings: ['r.*'] }, async (m) => { received.push(m); })).rejects.toThrow(/ACCESS_REFUSED|RESOURCE_LOCKED/);
        await holder.cancel(consumerTag);
        await holder.close();
        await bus.publish([{ id: 'after', routingKey: 'r.x', body: '{}' }]);
        await sleep(2_000); // a re-subscription, were one left behind, comes within 500 ms
        expect(received).toEqual([]);
        const channel = await admin.createChannel();
        expect((await channel.checkQueue(queue)).messageCount).toBe(1);
      });
    });
  });
});

describe('RabbitMqBus after a refused publish', () => {
  it('when the broker nacks a publish, then publish rejects (the outbox keeps the row) and the next publish goes on a new confirm channel', async () => {
    await requireService('rabbitmq');
    const { exchange, queue } = names('nack');
    const full = `${queue}.full`;
    const bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger, queues: { type: 'quorum' } });
    const received: IncomingMessage[] = [];
    try {
      await bus.consume({ queue, bindings: ['ok.*'] }, async (m) => { received.push(m); });
      await withAdmin(async (admin) => {
        const channel = await admin.createChannel();
        // A queue that refuses every message: the broker nacks what is routed to it.
        await channel.assertQueue(full, { durable: true, arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
        await channel.bindQueue(full, exchange, 'full.*');
      });
      // Internal, on purpose: what this test checks is which channel the next publish uses.
      const channelInUse = () => (bus as unknown as { connection: { connected?: { publishChannel: object } } }).connection.connected?.publishChannel;
      const before = channelInUse();
      await expect(bus.publish([{ id: 'refused', routingKey: 'full.x', body: '{}' }])).rejects.toThrow(/not confirmed/);
      expect(channelInUse()).toBeDefined();
      expect(channelInUse()).not.toBe(before);
      await bus.publish([{ id: 'accepted', routingKey: 'ok.x', body: '{}' }]);
      await waitFor(() => received.some((m) => m.id === 'accepted'), { timeoutMs: 10_000 });
      expect(bus.isConnected).toBe(true);
    } finally {
      await bus.close();
      await withAdmin((admin) => deleteTopology(admin, exchange, [queue, full]));
    }
  });
});

describe('RabbitMqBus with several broker addresses', () => {
  it('when the first address does not answer, then it connects to the next; when its node is lost, it fails over to another and consumes and publishes again', async () => {
    await requireService('rabbitmq');
    const { exchange, queue } = names('failover');
    const deadPort = await freePort();
    const first = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 });
    const second = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 });
    const url = [deadPort, first.port, second.port].map((port) => `amqp://guest:guest@127.0.0.1:${port}`).join(',');
    const bus = await RabbitMqBus.connect({
      url, exchange, logger: silentLogger, queues: { type: 'quorum' }, reconnectInitialDelayMs: 50, reconnectMaxDelayMs: 500, confirmTimeoutMs: 3_000,
    });
    const received: IncomingMessage[] = [];
    try {
      const subscription = await bus.consume({ queue, bindings: ['fo.*'] }, async (m) => { received.push(m); });
      await bus.publish([{ id: 'before', routingKey: 'fo.x', body: '{}' }]);
      await waitFor(() => received.length === 1, { timeoutMs: 10_000 });
      await first.cut(); // the node behind the first live address dies; it stays refused
      await waitFor(() => !bus.isConnected, { timeoutMs: 10_000 });
      expect(await bus.waitUntilConnected(20_000)).toBe(true);
      await bus.publish([{ id: 'after', routingKey: 'fo.x', body: '{}' }]);
      await waitFor(() => received.some((m) => m.id === 'after'), { timeoutMs: 10_000 });
      await subscription.cancel();
    } finally {
      await bus.close();
      await first.close();
      await second.close();
      await withAdmin((admin) => deleteTopology(admin, exchange, [queue]));
    }
  });
});
