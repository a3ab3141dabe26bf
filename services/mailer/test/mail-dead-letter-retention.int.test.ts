import { randomUUID } from 'node:crypto';
import { createLogger, type MailCommand } from '@vanish/common';
import { dlqName } from '@vanish/bus';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { waitFor } from '@vanish/testkit/net';
import { RabbitMqDeadLetterQueue } from '../src/adapters/amqp/rabbitmq-dead-letter-queue';
import { loadMailerConfig } from '../src/config';
import { createMailerService, type MailerService } from '../src/compose';
import { AMQP_URL, sleep, startBroker, type Broker } from './support/mailer-harness';

jest.setTimeout(120_000);

const LINK = 'https://vanish.test/0e8f6a52-3c1b-4f0e-9d7a-5b2c4e6f8a10';
const command = (to: string): MailCommand => ({
  kind: 'link', to, link: LINK, expiry_type: 'view', expires_at: '2026-12-01 00:00:00', max_views: 1, created_at: '2026-11-01 00:00:00',
});

/** DECISIONS 1: a dead-lettered mail command is dropped after its retention, and no body is ever logged. */
describe('dead-lettered mail commands on RabbitMQ', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let mailer: MailerService | undefined;

  beforeAll(async () => {
    broker = await startBroker('mail-dlq');
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await mailer?.stop();
    await sink?.close();
    await broker?.close();
  });

  it('when a sweep runs, then commands created before the cutoff and unreadable bodies are dropped, younger ones kept in order', async () => {
    const queue = dlqName(`${broker.queue}.sweep`);
    await broker.channel.assertQueue(queue, { durable: true });
    try {
      const now = Date.now();
      const body = (ageMs: number, to: string) => Buffer.from(JSON.stringify({
        id: randomUUID(), event: 'mail.send', version: 1, timestamp: new Date(now - ageMs).toISOString(), sealed: `sealed for ${to}`,
      }));
      broker.channel.sendToQueue(queue, body(8 * 86_400_000, 'old-1'));
      broker.channel.sendToQueue(queue, body(60_000, 'young-1'));
      broker.channel.sendToQueue(queue, Buffer.from('not json'));
      broker.channel.sendToQueue(queue, body(30 * 86_400_000, 'old-2'));
      broker.channel.sendToQueue(queue, body(1_000, 'young-2'));
      await waitFor(async () => ((await broker.messagesIn(queue)) === 5 ? true : undefined));

      const dlq = new RabbitMqDeadLetterQueue({ url: AMQP_URL, queue });
      expect(await dlq.dropOlderThan(new Date(now - 7 * 86_400_000))).toEqual({ dropped: 3, kept: 2 });

      const left: string[] = [];
      for (let message = await broker.channel.get(queue, { noAck: true }); message; message = await broker.channel.get(queue, { noAck: true })) {
        left.push((JSON.parse(message.content.toString()) as { sealed: string }).sealed);
      }
      expect(left).toEqual(['sealed for young-1', 'sealed for young-2']);
      expect(await new RabbitMqDeadLetterQueue({ url: AMQP_URL, queue: `${queue}.never-declared` }).dropOlderThan(new Date())).toEqual({ dropped: 0, kept: 0 });
    } finally {
      await broker.channel.deleteQueue(queue);
    }
  });

  it('when a command is dead-lettered, then the mailer drops it after MAIL_DEAD_LETTER_RETENTION_MS and logs neither its body nor its address', async () => {
    const logged: string[] = [];
    const logger = createLogger('mailer', 'debug', { write: (line: string) => { logged.push(line); } } as never);
    const config = loadMailerConfig(broker.env({
      SMTP_URL: sink.url, MAIL_DEAD_LETTER_RETENTION_MS: '10000', MAIL_DEAD_LETTER_SWEEP_INTERVAL_MS: '500', LOG_LEVEL: 'debug',
    }));
    mailer = await createMailerService(config, { logger });
    await mailer.start();
    await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0, { description: 'mail queue declared' });

    sink.failNext(1, 550); // permanent: dead-lettered at once
    await broker.publish(command('rejected@example.com'));
    const dlq = dlqName(broker.queue);
    await waitFor(async () => ((await broker.messagesIn(dlq)) === 1 ? true : undefined), { timeoutMs: 30_000, description: 'dead-lettered' });
    const [peek] = await Promise.all([broker.channel.get(dlq)]);
    const sealed = (JSON.parse(peek ? peek.content.toString() : '{}') as { sealed?: string }).sealed!;
    broker.channel.nackAll(true);
    expect(sealed).toMatch(/^x25519:x1\./);

    // Kept for its retention (young), then dropped by the sweeper. 10 s: the check a second after the
    // dead-lettering must come well inside it, even on a loaded machine.
    await sleep(1_000);
    expect(await broker.messagesIn(dlq)).toBe(1);
    await waitFor(async () => ((await broker.messagesIn(dlq)) === 0 ? true : undefined), { timeoutMs: 30_000, description: 'dropped after retention' });
    await waitFor(() => (logged.some((line) => line.includes('past their retention dropped')) ? true : undefined));

    const text = logged.join('');
    expect(text).not.toContain(sealed.slice(7, 47));
    expect(text).not.toContain('rejected@example.com');
    expect(text).not.toContain(LINK);
  });
});
