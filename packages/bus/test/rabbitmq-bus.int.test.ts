import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { PartialPublishError, silentLogger } from '@vanish/common';
import { RabbitMqBus, type ExpiringMessage, type RabbitMqBusOptions } from '@vanish/bus';
import { startFaultProxy } from '@vanish/testkit/fault-proxy';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { busContractTests } from './contract/bus.contract';
import { AMQP_URL, deleteTopology, rabbitHarness } from './support/rabbit-harness';

/**
 * Runs `work` with a bus on an exchange and queue name of the test's own, then closes the bus and
 * deletes what the test declared (the queue, `<queue>.bound`, their dead-letter and retry queues, the exchanges).
 */
async function withOwnBus(kind: string, work: (bus: RabbitMqBus, queue: string) => Promise<void>, options: Partial<RabbitMqBusOptions> = {}): Promise<void> {
  await requireService('rabbitmq');
  const exchange = `test.${kind}.${randomBytes(4).toString('hex')}`;
  const queue = `contract.${kind}.${randomBytes(3).toString('hex')}`;
  const admin = await amqp.connect(AMQP_URL);
  admin.on('error', () => undefined);
  const bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger, ...options });
  try {
    await work(bus, queue);
  } finally {
    await bus.close();
    await deleteTopology(admin, exchange, [queue, `${queue}.bound`]);
    await admin.close();
  }
}

const usedQueues = new Set<string>();

busContractTests('RabbitMqBus', rabbitHarness(usedQueues), usedQueues);

describe('RabbitMqBus when the broker stalls (accepts, answers nothing)', () => {
  it('when publishing to a stalled broker, then publish rejects within the confirm timeout, and works again after the stall ends', async () => {
    const proxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 });
    await withOwnBus('stall', async (bus, queue) => {
      const ids: string[] = [];
      await bus.consume({ queue, bindings: ['st.*'] }, async (m) => { ids.push(m.id); });
      proxy.stall();
      const started = Date.now();
      await expect(bus.publish([{ id: 'during', routingKey: 'st.x', body: '{}' }])).rejects.toThrow(/confirm|connect|closed/i);
      expect(Date.now() - started).toBeLessThan(5_000);
      proxy.restore();
      await waitFor(async () => {
        try {
          await bus.publish([{ id: 'after', routingKey: 'st.x', body: '{}' }]);
          return true;
        } catch {
          return false;
        }
      }, { description: 'publish works after the stall', timeoutMs: 30_000, intervalMs: 200 });
      await waitFor(() => ids.includes('after'), { description: 'delivery after the stall', timeoutMs: 30_000 });
    }, {
      url: `amqp://guest:guest@127.0.0.1:${proxy.port}`,
      confirmTimeoutMs: 1_000, heartbeatSeconds: 1, reconnectInitialDelayMs: 50, reconnectMaxDelayMs: 500,
    }).finally(() => proxy.close());
  }, 60_000);
});

describe('RabbitMqBus message expiry', () => {
  it('when a message carries expiresInMs and waits longer than that in its queue, then the broker drops it; others stay', async () => {
    await withOwnBus('expiry', async (bus, queue) => {
      // Declare the queue, then stop consuming so that the messages wait in it.
      await (await bus.consume({ queue, bindings: ['ex.*'] }, async () => undefined)).cancel();
      const messages: ExpiringMessage[] = [
        { id: 'short', routingKey: 'ex.a', body: '{}', expiresInMs: 100 },
        { id: 'kept', routingKey: 'ex.a', body: '{}' },
      ];
      await bus.publish(messages);
      await new Promise((r) => setTimeout(r, 400));
      const ids: string[] = [];
      await bus.consume({ queue, bindings: ['ex.*'] }, async (m) => { ids.push(m.id); });
      await waitFor(() => ids.length > 0, { description: 'a delivery' });
      await new Promise((r) => setTimeout(r, 200));
      expect(ids).toEqual(['kept']);
    });
  });
});

describe('RabbitMqBus on a fresh broker', () => {
  it('when no consumer has declared a queue for a routing key yet, then publish rejects (the outbox keeps the row) and succeeds once one has', async () => {
    await withOwnBus('fresh', async (bus, queue) => {
      await expect(bus.publish([{ id: 'early', routingKey: 'fresh.created', body: '{}' }])).rejects.toThrow(/no queue is bound for fresh.created/);
      // In a mixed batch the error names what the broker did take, so the relay sends only the rest again.
      await (await bus.consume({ queue: `${queue}.bound`, bindings: ['bound.*'] }, async () => undefined)).cancel();
      const mixed = bus.publish([{ id: 'taken', routingKey: 'bound.x', body: '{}' }, { id: 'early', routingKey: 'fresh.created', body: '{}' }]);
      await expect(mixed).rejects.toBeInstanceOf(PartialPublishError);
      await expect(mixed).rejects.toMatchObject({ confirmedIds: ['taken'] });
      const heartbeat: ExpiringMessage = { id: 'beat', routingKey: 'health.x', body: '{}', expiresInMs: 1_000 };
      await expect(bus.publish([heartbeat])).resolves.toBeUndefined();

      const ids: string[] = [];
      await bus.consume({ queue, bindings: ['fresh.*'] }, async (m) => { ids.push(m.id); });
      await bus.publish([{ id: 'early', routingKey: 'fresh.created', body: '{}' }]);
      await waitFor(() => ids.length === 1, { description: 'the retried message' });
      expect(ids).toEqual(['early']);
    });
  });
});
