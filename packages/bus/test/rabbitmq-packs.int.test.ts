import { randomBytes, randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import {
  PartialPublishError, PermanentMessageFailure, RetryMessageLater, silentLogger, type IncomingMessage, type OutgoingMessage, type Subscription,
} from '@vanish/common';
import { HEADER_DEAD_REASON, PACK_CONTENT_TYPE, RabbitMqBus, dlqName, dlxName, retryQueueName } from '@vanish/bus';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const RETRY_MS = 100;

const message = (routingKey: string, n: number): OutgoingMessage => ({ id: randomUUID(), routingKey, body: JSON.stringify({ n }) });

describe('RabbitMqBus packs (real RabbitMQ)', () => {
  const exchange = `test.packs.${randomBytes(4).toString('hex')}`;
  const queue = `test.packs.${randomBytes(4).toString('hex')}`;
  const rawQueue = `${queue}.raw`;
  let bus: RabbitMqBus;
  let admin: ChannelModel;
  let adminChannel: Channel;
  let subscription: Subscription | undefined;

  beforeAll(async () => {
    await requireService('rabbitmq');
    admin = await amqp.connect(AMQP_URL);
    adminChannel = await admin.createChannel();
    bus = await RabbitMqBus.connect({
      url: AMQP_URL, exchange, logger: silentLogger, packRoutingKeys: (key) => key.startsWith('pack.'),
    });
  });

  afterEach(async () => {
    await subscription?.cancel();
    subscription = undefined;
  });

  afterAll(async () => {
    await bus?.close();
    if (admin) {
      for (const name of [queue, rawQueue, dlqName(queue), retryQueueName(queue, RETRY_MS)]) await adminChannel.deleteQueue(name).catch(() => undefined);
      for (const name of [exchange, dlxName(exchange)]) await adminChannel.deleteExchange(name).catch(() => undefined);
      await admin.close();
    }
  });

  /** Subscribes the bus to `pack.*` on the test queue, recording every message the handler sees. */
  async function consume(handler: (message: IncomingMessage) => Promise<void> = async () => undefined): Promise<IncomingMessage[]> {
    const seen: IncomingMessage[] = [];
    subscription = await bus.consume({ queue, bindings: ['pack.*'], prefetch: 10, maxAttempts: 5, retryDelaysMs: [RETRY_MS] }, async (incoming) => {
      seen.push(incoming);
      await handler(incoming);
    });
    return seen;
  }

  it('when messages share a packed routing key, then they travel as one AMQP message and are handled one by one', async () => {
    await adminChannel.assertQueue(rawQueue, { durable: false, autoDelete: false });
    await adminChannel.bindQueue(rawQueue, exchange, 'pack.*');
    const seen = await consume();
    const created = Array.from({ length: 50 }, (_, i) => message('pack.created', i));
    const alone = message('pack.accessed', 99);
    await bus.publish([...created, alone]);

    await waitFor(() => seen.length === 51, { description: 'every member handled' });
    expect(new Map(seen.map((m) => [m.id, [m.routingKey, m.body, m.attempt]]))).toEqual(new Map([
      ...created.map((m): [string, unknown[]] => [m.id, ['pack.created', m.body, 1]]),
      [alone.id, ['pack.accessed', alone.body, 1]],
    ]));
    // What the broker carried: one pack of fifty, and the lone message as itself.
    const carried = [];
    for (let got = await adminChannel.get(rawQueue, { noAck: true }); got; got = await adminChannel.get(rawQueue, { noAck: true })) carried.push(got);
    expect(carried).toHaveLength(2);
    const pack = carried.find((m) => m.properties.contentType === PACK_CONTENT_TYPE);
    expect(pack?.fields.routingKey).toBe('pack.created');
    expect((JSON.parse(pack!.content.toString('utf8')) as { members: unknown[] }).members).toHaveLength(50);
    const single = carried.find((m) => m.properties.contentType !== PACK_CONTENT_TYPE);
    expect(single?.properties.messageId).toBe(alone.id);
    expect(single?.content.toString('utf8')).toBe(alone.body);
    await adminChannel.deleteQueue(rawQueue);
  });

  it('when members of one pack fail differently, then only the failed ones are retried or dead-lettered, under their own ids', async () => {
    const members = Array.from({ length: 5 }, (_, i) => message('pack.mixed', i));
    const [fine, poison, flaky] = members;
    const seen = await consume(async (incoming) => {
      if (incoming.id === poison.id) throw new PermanentMessageFailure('never countable');
      if (incoming.id === flaky.id && incoming.attempt === 1) throw new RetryMessageLater('not yet', RETRY_MS);
    });
    await bus.publish(members);

    await waitFor(() => seen.filter((m) => m.id === flaky.id).length === 2, { description: 'the flaky member retried' });
    await new Promise((resolve) => setTimeout(resolve, 3 * RETRY_MS));
    const count = (id: string) => seen.filter((m) => m.id === id).length;
    expect(count(fine.id)).toBe(1);
    expect(count(poison.id)).toBe(1);
    expect(seen.filter((m) => m.id === flaky.id).map((m) => m.attempt)).toEqual([1, 2]);
    for (const other of members.slice(3)) expect(count(other.id)).toBe(1);

    const dead = await adminChannel.get(dlqName(queue), { noAck: true });
    expect(dead && dead.properties.messageId).toBe(poison.id);
    expect(dead && dead.content.toString('utf8')).toBe(poison.body);
    expect(dead && dead.properties.headers?.[HEADER_DEAD_REASON]).toBe('permanent');
    expect(await adminChannel.get(dlqName(queue), { noAck: true })).toBe(false);
    expect((await adminChannel.checkQueue(queue)).messageCount).toBe(0);
  });

  it('when a pack cannot be read, then it is dead-lettered whole and consumption goes on', async () => {
    const seen = await consume();
    const publisher = await admin.createConfirmChannel();
    publisher.publish(exchange, 'pack.created', Buffer.from('{"v":1,"members":[{"id":""}]}'), { contentType: PACK_CONTENT_TYPE, messageId: 'broken-pack' });
    await publisher.waitForConfirms();
    await publisher.close();
    const after = message('pack.created', 7);
    await bus.publish([after]);
    await waitFor(() => seen.some((m) => m.id === after.id), { description: 'the next message handled' });
    const dead = await waitFor(async () => (await adminChannel.get(dlqName(queue), { noAck: true })) || undefined, { description: 'the broken pack dead-lettered' });
    expect(dead.properties.messageId).toBe('broken-pack');
    expect(dead.properties.headers?.[HEADER_DEAD_REASON]).toBe('malformed');
    expect(seen.map((m) => m.id)).toEqual([after.id]);
  });

  it('when no queue takes a pack, then the publish fails and names only the other messages as confirmed', async () => {
    await consume(); // binds pack.* only
    const unbound = Array.from({ length: 3 }, (_, i) => message('unbound.created', i));
    const bound = Array.from({ length: 3 }, (_, i) => message('pack.created', i));
    const other = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger, packRoutingKeys: () => true });
    try {
      const failure = await other.publish([...unbound, ...bound]).then(() => undefined, (err: unknown) => err);
      expect(failure).toBeInstanceOf(PartialPublishError);
      expect([...(failure as PartialPublishError).confirmedIds].sort()).toEqual(bound.map((m) => m.id).sort());
    } finally {
      await other.close();
    }
  });
});
