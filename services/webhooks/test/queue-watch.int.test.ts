import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { requireService } from '@vanish/testkit/services';
import { RabbitMqQueueWatch } from '../src/adapters/amqp/rabbitmq-queue-watch';
import { AMQP_URL } from './support/world';

jest.setTimeout(60_000);

/** The dead-letter queue's depth and retention (DECISIONS 1: a dead letter holds a sealed uuid). */
describe('RabbitMqQueueWatch', () => {
  const queue = `test.wh-watch.${randomBytes(4).toString('hex')}.webhooks`;
  let connection: amqp.ChannelModel;
  let channel: amqp.Channel;

  beforeAll(async () => {
    await requireService('rabbitmq');
    connection = await amqp.connect(AMQP_URL);
    channel = await connection.createChannel();
    await channel.assertQueue(queue, { durable: false });
    await channel.assertQueue(`${queue}.dlq`, { durable: false });
  });
  afterAll(async () => {
    await channel.deleteQueue(queue).catch(() => undefined);
    await channel.deleteQueue(`${queue}.dlq`).catch(() => undefined);
    await connection.close();
  });

  it('when dead letters are older and newer than the retention, then the old ones are dropped, the new ones kept, and the depths say so', async () => {
    const old = new Date(Date.now() - 8 * 24 * 3_600_000).toISOString();
    const recent = new Date().toISOString();
    for (const timestamp of [old, recent, old]) channel.sendToQueue(`${queue}.dlq`, Buffer.from(JSON.stringify({ id: 'x', timestamp, webhook: 'x25519:sealed' })));
    channel.sendToQueue(queue, Buffer.from('{}'));
    const watch = new RabbitMqQueueWatch({ url: AMQP_URL, queue });
    for (let i = 0; i < 50 && (await watch.depths()).deadLetter < 3; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await watch.depths()).toEqual({ main: 1, deadLetter: 3 });
    expect(await watch.dropDeadLettersOlderThan(new Date(Date.now() - 7 * 24 * 3_600_000))).toEqual({ dropped: 2, kept: 1 });
    expect((await watch.depths()).deadLetter).toBe(1);
  });
});
