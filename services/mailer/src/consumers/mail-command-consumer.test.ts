import {
  ConsumerSealer, KeyRing, MAIL_SEAL_PURPOSE, ManualClock, MessageSealer, PermanentMessageFailure, publicRingOf, RetryMessageLater, silentLogger,
  type ConsumeOptions, type MailCommand, type MessageConsumer, type MessageHandler,
} from '@vanish/common';
import { FakeMailerStore } from '../adapters/fakes/fake-mailer-store';
import { FakeMailTransport } from '../adapters/fakes/fake-mail-transport';
import { AddressHasher } from '../domain/address-hasher';
import { MailDeliveryService, noopObserver } from '../domain/mail-delivery-service';
import { MailDeliveryError } from '../domain/mail-transport';
import { RetryPolicy } from '../domain/retry-policy';
import { UnsubscribeTokens } from '../domain/unsubscribe-tokens';
import { MailCommandConsumer } from './mail-command-consumer';
import { MailCommandOpener } from './mail-command-opener';

/** A consumer that hands messages to the handler when told to (the bus's contract is tested in @vanish/bus). */
class FakeConsumer implements MessageConsumer {
  options: ConsumeOptions | undefined;
  handler: MessageHandler | undefined;
  async consume(options: ConsumeOptions, handler: MessageHandler) {
    this.options = options;
    this.handler = handler;
    return { cancel: async () => { this.handler = undefined; } };
  }
}

const ring = KeyRing.generate('m1');
const sealer = new ConsumerSealer(publicRingOf(ring), MAIL_SEAL_PURPOSE);
const command: MailCommand = { kind: 'notification', to: 'carol@example.com', read_at: '2026-01-01 00:00:00', views_left: 0 };
const envelope = (id: string, sealed = sealer.seal(JSON.stringify(command))) =>
  JSON.stringify({ id, event: 'mail.send', version: 1, timestamp: '2026-01-01T00:00:00Z', sealed });

async function setup() {
  const bus = new FakeConsumer();
  const store = new FakeMailerStore();
  const transport = new FakeMailTransport();
  const key = Buffer.alloc(32, 5);
  const service = new MailDeliveryService({
    store, transport, hasher: new AddressHasher(key), tokens: new UnsubscribeTokens(key), clock: new ManualClock(),
    retryPolicy: new RetryPolicy({ initialDelayMs: 100, maxDelayMs: 1000, horizonMs: 10_000 }, () => 0.99),
    logger: silentLogger, mailFrom: 'n@vanish.test', publicBaseUrl: 'http://x', quotaPerHour: 10, quotaPerDay: 50, attemptLeaseMs: 120_000,
  });
  const consumer = new MailCommandConsumer({
    consumer: bus, opener: new MailCommandOpener({ privateKeys: ring }), service, observer: noopObserver, logger: silentLogger, queue: 'q', prefetch: 4, storeRetryDelayMs: 500,
  });
  await consumer.start();
  const deliver = (body: string, attempt = 1) => bus.handler!({ id: 'm', routingKey: 'mail.send', body, attempt });
  return { bus, store, transport, consumer, deliver };
}

describe('MailCommandConsumer', () => {
  it('when started, then it consumes mail.send from its queue', async () => {
    const { bus } = await setup();
    expect(bus.options).toMatchObject({ queue: 'q', bindings: ['mail.send'], prefetch: 4 });
  });

  it('when a sealed command arrives, then the handler resolves (ack) only after the e-mail was handed over', async () => {
    const { deliver, transport } = await setup();
    await deliver(envelope('c1'));
    expect(transport.sent).toHaveLength(1);
  });

  it('when the command does not open with the mailer\'s keys, then it is a permanent failure naming no address', async () => {
    const { deliver } = await setup();
    const foreign = new ConsumerSealer(publicRingOf(KeyRing.generate('m1')), MAIL_SEAL_PURPOSE).seal(JSON.stringify(command));
    await expect(deliver(envelope('c0', foreign))).rejects.toThrow(PermanentMessageFailure);
    const legacy = new MessageSealer(KeyRing.generate('m1'), MAIL_SEAL_PURPOSE).seal(JSON.stringify(command));
    await expect(deliver(envelope('c1', legacy))).rejects.toThrow(PermanentMessageFailure);
    await expect(deliver(envelope('c1', foreign))).rejects.toThrow(PermanentMessageFailure);
    await expect(deliver('not json')).rejects.toThrow(PermanentMessageFailure);
  });

  it('when SMTP fails temporarily, then a broker-held retry is asked with the backoff delay', async () => {
    const { deliver, transport } = await setup();
    transport.failWith(new MailDeliveryError('temporary', 'SMTP 451 at MAIL FROM: later'));
    const error = await deliver(envelope('c1')).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RetryMessageLater);
    expect((error as RetryMessageLater).delayMs).toBe(100);
  });

  it('when SMTP rejects permanently, then it is dead-lettered with the reason', async () => {
    const { deliver, transport } = await setup();
    transport.failWith(new MailDeliveryError('permanent', 'SMTP 550 at RCPT TO: unknown user [address]', { recipientRejected: true }));
    await expect(deliver(envelope('c1'))).rejects.toThrow(/rejected: SMTP 550 at RCPT TO/);
  });

  it('when the mailer database is down, then the command is retried later, not dropped', async () => {
    const { deliver, store, transport } = await setup();
    store.available = false;
    await expect(deliver(envelope('c1'))).rejects.toBeInstanceOf(RetryMessageLater);
    store.available = true;
    await deliver(envelope('c1'), 2);
    expect(transport.sent).toHaveLength(1);
  });
});

describe('MailCommandOpener', () => {
  const privateKeys = KeyRing.generate('m2');
  const legacyKeys = KeyRing.generate('m1');
  const text = JSON.stringify(command);
  const toMailer = () => new ConsumerSealer(publicRingOf(privateKeys), MAIL_SEAL_PURPOSE).seal(text);
  const legacy = () => new MessageSealer(legacyKeys, MAIL_SEAL_PURPOSE).seal(text);

  it('when both rings are held (the migration), then commands of either kind open and legacy ones are counted', () => {
    let legacyOpened = 0;
    const opener = new MailCommandOpener({ privateKeys, legacyKeys, onLegacyOpened: () => { legacyOpened += 1; } });
    expect(opener.open(toMailer())).toBe(text);
    expect(opener.open(legacy())).toBe(text);
    expect(legacyOpened).toBe(1);
  });

  it('when the legacy ring is retired, then a legacy command fails saying so and one sealed to the mailer still opens', () => {
    const opener = new MailCommandOpener({ privateKeys });
    expect(opener.open(toMailer())).toBe(text);
    expect(() => opener.open(legacy())).toThrow(/legacy MAIL_KEYS ring, which this mailer no longer holds/);
  });
});
