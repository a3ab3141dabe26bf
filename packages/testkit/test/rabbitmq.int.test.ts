import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { deleteRabbitObjects, RABBITMQ_URL } from '@vanish/testkit/rabbitmq';
import { requireService } from '@vanish/testkit/services';

describe('deleteRabbitObjects', () => {
  beforeAll(async () => {
    await requireService('rabbitmq');
  });

  it('when a test leaves queues and exchanges behind, then those with its prefix are deleted and the others kept', async () => {
    const tag = `testkit_${randomBytes(4).toString('hex')}`;
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      const channel = await connection.createChannel();
      await channel.assertExchange(tag, 'topic', { durable: true });
      await channel.assertExchange(`${tag}.dlx`, 'direct', { durable: true });
      await channel.assertQueue(`${tag}.q`, { durable: true });
      await channel.assertQueue(`${tag}.q.dlq`, { durable: true });
      const other = `other_${tag}`;
      await channel.assertQueue(other, { durable: true });

      const deleted = await deleteRabbitObjects(tag);
      expect(deleted.queues.sort()).toEqual([`${tag}.q`, `${tag}.q.dlq`]);
      expect(deleted.exchanges.sort()).toEqual([tag, `${tag}.dlx`]);

      await expect(channel.checkQueue(other)).resolves.toMatchObject({ queue: other });
      await channel.deleteQueue(other);
      const probe = await connection.createChannel();
      probe.on('error', () => undefined);
      await expect(probe.checkQueue(`${tag}.q`)).rejects.toThrow(/NOT_FOUND/);
    } finally {
      await connection.close();
    }
  });
});
