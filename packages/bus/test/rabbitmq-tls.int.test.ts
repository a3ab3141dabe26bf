import { randomBytes } from 'node:crypto';
import { silentLogger, type IncomingMessage } from '@vanish/common';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { startTlsRabbitMq, type TlsServer } from '@vanish/testkit/tls-servers';
import { waitFor } from '@vanish/testkit/net';
import { RabbitMqBus } from '../src';

/**
 * The bus over amqps:// against a RabbitMQ node of our own whose only listener is TLS
 * (`listeners.tcp = none`): a message that travels went over TLS. The node is slow to start, so
 * one per file. The certificate names `localhost`; the URLs dial it by that name.
 */
describe('RabbitMQ bus over amqps:// (our own node, TLS listener only, throwaway CA)', () => {
  let ca: TestCertificateAuthority;
  let otherCa: TestCertificateAuthority;
  let node: TlsServer;
  const buses: RabbitMqBus[] = [];

  beforeAll(async () => {
    ca = createTestCa('vanish test CA');
    otherCa = createTestCa('someone else');
    node = await startTlsRabbitMq({ caFile: ca.caFile, certificate: ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] }) });
  }, 180_000);

  afterAll(async () => {
    for (const bus of buses) await bus.close();
    await node?.stop();
    ca?.remove();
    otherCa?.remove();
  }, 60_000);

  const connect = async (trusted: string) => {
    const bus = await RabbitMqBus.connect({
      url: `amqps://guest:guest@localhost:${node.port}`, tls: { ca: trusted }, exchange: `tls-${randomBytes(4).toString('hex')}`,
      logger: silentLogger, connectLazily: true, reconnectInitialDelayMs: 200, reconnectMaxDelayMs: 1000,
    });
    buses.push(bus);
    return bus;
  };

  it('when AMQP_URL is amqps:// and the CA is the node\'s, then a published message is consumed', async () => {
    const bus = await connect(ca.ca);
    expect(await bus.waitUntilConnected(30_000)).toBe(true);
    const received: IncomingMessage[] = [];
    const subscription = await bus.consume({ queue: `tls-q-${randomBytes(4).toString('hex')}`, bindings: ['tls.#'] }, async (message) => { received.push(message); });
    await bus.publish([{ id: randomBytes(8).toString('hex'), routingKey: 'tls.ping', body: '{"hello":"over TLS"}' }]);
    await waitFor(() => received.length === 1, { timeoutMs: 15_000, description: 'the message over TLS' });
    expect(received[0]!.body).toBe('{"hello":"over TLS"}');
    await subscription.cancel();
  }, 60_000);

  it('when the CA is another one, then the bus never connects (the node\'s certificate is refused)', async () => {
    const bus = await connect(otherCa.ca);
    expect(await bus.waitUntilConnected(3_000)).toBe(false);
  }, 30_000);
});
