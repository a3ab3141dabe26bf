import { join } from 'node:path';
import { publicRingOf, silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { waitFor } from '@vanish/testkit/net';
import { loadMailerConfig } from '../src/config';
import { createMailerService, type MailerService } from '../src/compose';
import { counter, sleep, startBroker, type Broker } from './support/mailer-harness';

jest.setTimeout(60_000);

/** The notes service and the mailer, each as in production, talking only through RabbitMQ. */
describe('notes → RabbitMQ → mailer → SMTP', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let mailer: MailerService;
  let notes: NotesService;
  let notesPort: number;
  let mailerPort: number;

  beforeAll(async () => {
    broker = await startBroker('mailer-notes');
    sink = await startSmtpSink();
    const env = broker.env({ SMTP_URL: sink.url, PUBLIC_BASE_URL: 'https://vanish.test' });
    mailer = await createMailerService(loadMailerConfig(env), { logger: silentLogger });
    ({ port: mailerPort } = await mailer.start());
    await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0, { description: 'mail queue declared' });
    // Notes holds only the mailer's public keys (DECISIONS 1), not the MAIL_KEYS of the shared env.
    const { MAIL_KEYS: _legacy, MAIL_PRIVATE_KEYS: _private, ...notesEnv } = env;
    notes = await createNotesService(loadNotesConfig({
      ...notesEnv, MAIL_PUBLIC_KEYS: publicRingOf(broker.privateRing).serialize(), DATABASE_URL: `sqlite:${join(broker.dataDir, 'notes.db')}`,
    }), { logger: silentLogger });
    ({ port: notesPort } = await notes.start());
  });
  afterAll(async () => {
    expect(await broker.drainDlq()).toEqual([]);
    await notes?.stop();
    await mailer?.stop();
    await sink?.close();
    await broker?.close([1000, 2000]);
  });
  beforeEach(() => { sink.messages.length = 0; });

  const create = async (body: Record<string, unknown>) => {
    const res = await fetch(`http://127.0.0.1:${notesPort}/api/create.php`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { uuid: string; url: string };
  };

  it('when a note is created with send_link_email, then one e-mail arrives with exactly the note link and no content', async () => {
    const created = await create({ content: 'the secret words', send_link_email: 'friend@example.com', max_views: 2 });
    const [mail] = await sink.waitForMessages(1);
    expect(mail!.to).toEqual(['friend@example.com']);
    expect(created.url).toBe(`https://vanish.test/${created.uuid}`);
    expect(mail!.parsed.text).toContain(created.url);
    expect(mail!.parsed.text).toContain('destroyed after 2 views');
    expect(mail!.raw.toString()).not.toContain('the secret words');
    await sleep(500);
    expect(sink.messages).toHaveLength(1);
  });

  it('when a note with notification_email is read three times, then three e-mails arrive and none holds the content, the link or the uuid', async () => {
    const created = await create({ content: 'do not leak me', notification_email: 'owner@example.com', max_views: 3 });
    for (let i = 0; i < 3; i += 1) await expect(notes.notes.reveal(created.uuid, null)).resolves.toMatchObject({ outcome: 'revealed' });
    const mails = await sink.waitForMessages(3);
    for (const mail of mails) {
      const raw = mail.raw.toString();
      expect(mail.to).toEqual(['owner@example.com']);
      expect(raw).not.toContain('do not leak me');
      expect(raw).not.toContain(created.uuid);
    }
    expect(mails.map((m) => m.parsed.text).join('\n')).toContain('It has now self-destructed');
    await sleep(500);
    expect(sink.messages).toHaveLength(3);
  });

  it('when the recipient unsubscribed, then creating another note with that address sends no e-mail', async () => {
    await create({ content: 'first', send_link_email: 'stop@example.com' });
    const [mail] = await sink.waitForMessages(1);
    const url = mail!.parsed.headerLines.find((l) => l.key === 'list-unsubscribe')!.line.match(/<(.+)>/)![1]!;
    const res = await fetch(url.replace('https://vanish.test', `http://127.0.0.1:${mailerPort}`), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(res.status).toBe(200);
    sink.messages.length = 0;
    const sentBefore = await counter(mailer.registry, 'mailer_emails_sent_total');
    await create({ content: 'second', send_link_email: 'stop@example.com' });
    await create({ content: 'marker', send_link_email: 'marker@example.com' });
    await waitFor(() => sink.messages.some((m) => m.to.includes('marker@example.com')), { timeoutMs: 10_000 });
    await sleep(500);
    expect(sink.messages.map((m) => m.to[0])).toEqual(['marker@example.com']);
    expect(await counter(mailer.registry, 'mailer_emails_sent_total')).toBe(sentBefore + 1);
  });
});
