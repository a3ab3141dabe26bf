import type { MailCommand } from '@vanish/common';
import { silentLogger } from '@vanish/common';
import { HEADER_DEAD_REASON, HEADER_ERROR, retryQueueName } from '@vanish/bus';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { waitFor } from '@vanish/testkit/net';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { loadMailerConfig } from '../src/config';
import { createMailerService, type MailerService } from '../src/compose';
import { counter, sleep, startBroker, type Broker } from './support/mailer-harness';
import { startRecipientPolicySink, type RecipientPolicySink } from './support/recipient-policy-sink';

jest.setTimeout(60_000);

const NOTE_LINK = 'https://vanish.test/6f1d3c2a-8b4e-4f7a-9c1d-2e3f4a5b6c7d';
const link = (to: string): MailCommand => ({
  kind: 'link', to, link: NOTE_LINK, expiry_type: 'view', expires_at: '2026-12-01 00:00:00', max_views: 1, created_at: '2026-11-01 00:00:00',
});
const notification = (to: string, viewsLeft: number): MailCommand => ({ kind: 'notification', to, read_at: '2026-11-02 08:30:00', views_left: viewsLeft });
const random = () => 0.99;

async function start(broker: Broker, smtpUrl: string, extra: Record<string, string> = {}): Promise<{ mailer: MailerService; port: number }> {
  const mailer = await createMailerService(loadMailerConfig(broker.env({ SMTP_URL: smtpUrl, ...extra })), { logger: silentLogger, random });
  const { port } = await mailer.start();
  // The bus connects lazily: commands published before the queue is bound would be unroutable.
  await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0, { description: 'mail queue declared' });
  return { mailer, port };
}

describe('mailer with RabbitMQ, SQLite and a real SMTP server', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let mailer: MailerService;
  let port: number;

  beforeAll(async () => {
    broker = await startBroker('mailer');
    sink = await startSmtpSink();
    ({ mailer, port } = await start(broker, sink.url));
  });
  afterAll(async () => {
    await mailer?.stop();
    await sink?.close();
    await broker?.close([1000, 2000]);
  });
  beforeEach(async () => {
    await waitFor(async () => (await broker.messagesIn(broker.queue)) === 0);
    sink.messages.length = 0;
    await broker.drainTap();
  });

  it('when a link command is published, then one e-mail arrives with the link, the self-destruct rule and a working unsubscribe header', async () => {
    await broker.publish(link('alice@example.com'));
    const [mail] = await sink.waitForMessages(1);
    expect(mail!.to).toEqual(['alice@example.com']);
    expect(mail!.parsed.subject).toBe('A note was shared with you on vanish');
    expect(mail!.parsed.text).toContain(NOTE_LINK);
    expect(mail!.parsed.html).toContain(`href="${NOTE_LINK}"`);
    expect(mail!.parsed.text).toContain('destroyed after 1 view, and deleted unread on 2026-12-01 00:00:00 UTC');
    expect(mail!.parsed.text).toContain('on 2026-11-01 00:00:00 UTC');
    const unsubscribe = mail!.parsed.headerLines.find((l) => l.key === 'list-unsubscribe')!.line.replace(/\s+/g, ' ');
    expect(unsubscribe).toMatch(/^List-Unsubscribe: <https:\/\/vanish\.test\/unsubscribe\/u1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>$/);
    expect(mail!.parsed.text).toContain(unsubscribe.slice('List-Unsubscribe: <'.length, -1));
  });

  it('when three notifications are published, then three e-mails arrive and none holds a link to the note', async () => {
    for (const left of [2, 1, 0]) await broker.publish(notification('owner@example.com', left));
    const mails = await sink.waitForMessages(3);
    for (const mail of mails) {
      expect(mail.parsed.subject).toBe('Your vanish note was read');
      expect(mail.parsed.text).not.toContain(NOTE_LINK);
      expect(mail.parsed.html).not.toContain(NOTE_LINK);
      expect(mail.parsed.text!.split('To receive no more')[0]).not.toMatch(/https?:/);
    }
    expect(mails.map((m) => m.parsed.text).join('\n')).toContain('It has now self-destructed');
  });

  it('when the SMTP server answers 451 twice and then 250, then the e-mail is delivered exactly once', async () => {
    const failedBefore = await counter(mailer.registry, 'mailer_emails_failed_total');
    sink.failNext(2, 451);
    await broker.publish(link('bob@example.com'));
    await sink.waitForMessages(1, 20_000);
    expect(await counter(mailer.registry, 'mailer_emails_failed_total')).toBe(failedBefore + 2);
    await sleep(1500);
    expect(sink.messages).toHaveLength(1);
  });

  it('when the SMTP server is down for a while and comes back, then every queued e-mail arrives exactly once', async () => {
    sink.goDown();
    const ids = [];
    for (let i = 0; i < 4; i += 1) ids.push(await broker.publish(link(`reader${i}@example.com`)));
    await waitFor(async () => (await counter(mailer.registry, 'mailer_emails_failed_total')) >= 4, { timeoutMs: 20_000 });
    await sleep(1000);
    expect(sink.messages).toHaveLength(0);
    sink.comeBack();
    const mails = await sink.waitForMessages(4, 20_000);
    await sleep(2500);
    expect(sink.messages).toHaveLength(4);
    expect(new Set(mails.map((m) => m.parsed.messageId))).toEqual(new Set(ids.map((id) => `<${id}@localhost>`)));
  });

  it('when the mailer restarts while a message waits for its next try, then the message waits in the broker and is delivered once after', async () => {
    sink.failNext(1, 451);
    await broker.publish(link('carol@example.com'));
    const retryQueue = retryQueueName(broker.queue, 1000);
    await waitFor(async () => (await broker.messagesIn(retryQueue)) === 1, { timeoutMs: 10_000, intervalMs: 20 });
    await mailer.stop();
    await sleep(1500);
    expect(await broker.messagesIn(broker.queue)).toBe(1); // back from the retry queue, nobody consuming
    expect(sink.messages).toHaveLength(0);
    ({ mailer, port } = await start(broker, sink.url));
    await sink.waitForMessages(1, 20_000);
    await sleep(1500);
    expect(sink.messages).toHaveLength(1);
  });

  it('when a recipient unsubscribes through the link, then nothing more is sent to that address', async () => {
    await broker.publish(link('dave@example.com'));
    const [mail] = await sink.waitForMessages(1);
    const url = mail!.parsed.headerLines.find((l) => l.key === 'list-unsubscribe')!.line.match(/<(.+)>/)![1]!;
    const local = url.replace('https://vanish.test', `http://127.0.0.1:${port}`);
    const page = await fetch(local);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post"');
    const done = await fetch(local, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(done.status).toBe(200);
    expect((await fetch(local.replace(/.$/, (c) => String.fromCharCode(c.charCodeAt(0) ^ 1)), { method: 'POST' })).status).toBe(404);

    const id = await broker.publish(notification('Dave@Example.com', 0));
    const knex = configureKnex(`sqlite:${broker.dataDir}/mailer.db`);
    try {
      await waitFor(async () => (await knex('mailer_deliveries').where({ command_id: id }).first())?.state === 'suppressed', { timeoutMs: 10_000 });
    } finally {
      await knex.destroy();
    }
    expect(sink.messages).toHaveLength(1);
  });

  it('when read raw from the broker, then a mail command holds no address and no link in clear', async () => {
    await broker.publish(link('erin@example.com'));
    await sink.waitForMessages(1);
    const raw = (await broker.drainTap()).filter((m) => m.fields.routingKey === 'mail.send');
    expect(raw).toHaveLength(1);
    const text = raw[0]!.content.toString('utf8') + JSON.stringify(raw[0]!.properties);
    expect(text).not.toContain('erin');
    expect(text).not.toContain('example.com');
    expect(text).not.toContain('6f1d3c2a');
  });

  it('when running, then heartbeats on health.mailer report e-mail configured, and unhealthy while SMTP is down', async () => {
    const beats = async () => (await broker.drainTap()).filter((m) => m.fields.routingKey === 'health.mailer')
      .map((m) => JSON.parse(m.content.toString()) as { data: { service: string; components: { email: string } } });
    const ok = await waitFor(async () => (await beats()).find((b) => b.data.components.email === 'configured'), { timeoutMs: 5000 });
    expect(ok.data.service).toBe('mailer');
    sink.goDown();
    try {
      await waitFor(async () => (await beats()).find((b) => b.data.components.email === 'unhealthy'), { timeoutMs: 10_000 });
    } finally {
      sink.comeBack();
    }
  });
});

describe('mailer with a receiving server that rejects recipients', () => {
  let broker: Broker;
  let sink: RecipientPolicySink;
  let mailer: MailerService;

  beforeAll(async () => {
    broker = await startBroker('mailer-reject');
    sink = await startRecipientPolicySink();
    // Retries at +1 s; the next (+2 s) would end past the 2.5 s horizon.
    ({ mailer } = await start(broker, sink.url, { MAIL_RETRY_HORIZON_MS: '2500' }));
  });
  afterAll(async () => {
    await mailer?.stop();
    await sink?.close();
    await broker?.close([1000, 2000]);
  });

  it('when the server answers 550 for the recipient, then the command is dead-lettered with the reason, not retried, and the address suppressed', async () => {
    sink.reject('gone@example.com', 550);
    const id = await broker.publish(link('gone@example.com'));
    const [dead] = await waitFor(async () => { const d = await broker.drainDlq(); return d.length ? d : undefined; }, { timeoutMs: 10_000 });
    expect(dead!.properties.messageId).toBe(id);
    expect(String(dead!.properties.headers![HEADER_DEAD_REASON])).toBe('permanent');
    expect(String(dead!.properties.headers![HEADER_ERROR])).toMatch(/rejected: SMTP 550 at RCPT TO/);
    const raw = dead!.content.toString() + JSON.stringify(dead!.properties);
    expect(raw).not.toContain('gone@');
    expect(raw).not.toContain('6f1d3c2a');
    expect(await counter(mailer.registry, 'mailer_emails_dead_lettered_total')).toBe(1);
    await sleep(1500);
    expect(sink.rcptAttempts).toEqual(['gone@example.com']);

    await broker.publish(notification('gone@example.com', 0));
    await broker.publish(link('fine@example.com'));
    await waitFor(() => sink.accepted.includes('fine@example.com'), { timeoutMs: 10_000 });
    await sleep(500);
    expect(sink.rcptAttempts.filter((a) => a === 'gone@example.com')).toHaveLength(1);
  });

  it('when the server keeps answering 451 past the retry horizon, then the command is dead-lettered with the last error and the address is not suppressed', async () => {
    sink.reject('busy@example.com', 451);
    const id = await broker.publish(link('busy@example.com'));
    const [dead] = await waitFor(async () => { const d = await broker.drainDlq(); return d.length ? d : undefined; }, { timeoutMs: 15_000 });
    expect(dead!.properties.messageId).toBe(id);
    expect(String(dead!.properties.headers![HEADER_ERROR])).toMatch(/retries exhausted after 2 attempts: SMTP 451 at RCPT TO/);
    expect(sink.rcptAttempts.filter((a) => a === 'busy@example.com')).toHaveLength(2);
    sink.accept('busy@example.com');
    await broker.publish(notification('busy@example.com', 0));
    await waitFor(() => sink.accepted.includes('busy@example.com'), { timeoutMs: 10_000 });
  });
});
