import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { startTlsRabbitMq, type TlsServer } from '@vanish/testkit/tls-servers';
import { RabbitMqDeadLetterQueue } from '../src/adapters/amqp/rabbitmq-dead-letter-queue';

// The dead-letter sweeper opens a connection of its own: it must use the same TLS settings (and the
// same list of nodes) as the mailer's bus, through connectToBroker, or an amqps:// broker with a
// private CA refuses it and dead letters are never dropped after their retention.
describe('mailer dead-letter sweeper over amqps:// (our own node, throwaway CA)', () => {
  let ca: TestCertificateAuthority;
  let node: TlsServer;

  beforeAll(async () => {
    ca = createTestCa('vanish test CA');
    node = await startTlsRabbitMq({ caFile: ca.caFile, certificate: ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] }) });
  }, 180_000);

  afterAll(async () => {
    await node?.stop();
    ca?.remove();
  }, 60_000);

  it('when AMQP_URL is amqps:// with a private CA (and lists a dead node first), then the sweep connects and drops what is past its retention', async () => {
    const url = `amqps://guest:guest@localhost:${node.port}`;
    const queue = `sweep-${randomBytes(4).toString('hex')}.dlq`;
    const admin = await amqp.connect(url, { ca: [ca.ca] });
    try {
      const channel = await admin.createConfirmChannel();
      await channel.assertQueue(queue, { durable: true });
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ timestamp: '2020-01-01T00:00:00.000Z' })), { persistent: true });
      channel.sendToQueue(queue, Buffer.from(JSON.stringify({ timestamp: new Date().toISOString() })), { persistent: true });
      await channel.waitForConfirms();
      await channel.close();

      const sweeper = new RabbitMqDeadLetterQueue({ url: `amqps://guest:guest@localhost:1,${url}`, tls: { ca: ca.ca }, queue });
      expect(await sweeper.dropOlderThan(new Date(Date.now() - 60_000))).toEqual({ dropped: 1, kept: 1 });
    } finally {
      await admin.close();
    }
  }, 60_000);
});
