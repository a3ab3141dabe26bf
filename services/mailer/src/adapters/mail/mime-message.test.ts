import { simpleParser } from 'mailparser';
import type { MailCommand } from '@vanish/common';
import type { OutgoingEmail } from '../../domain/mail-transport';
import { MAIL_LOCALES } from '../../domain/mail-i18n';
import { renderEmail } from '../../domain/mail-templates';
import { composeMimeMessage, envelopeSender, quotedPrintable } from './mime-message';

const headers = {
  'List-Unsubscribe': '<https://vanish.test/unsubscribe/u1.abc.def>',
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  'Auto-Submitted': 'auto-generated',
};
const email = (overrides: Partial<OutgoingEmail> = {}): OutgoingEmail => ({
  messageId: '<cmd-1@vanish.test>', from: 'vanish <notes@vanish.test>', to: 'reader@example.com',
  subject: 'A note was shared with you on vanish', text: 'Hello,\n\nhttps://vanish.test/abc\n', html: '<p>Hello,</p>', headers, ...overrides,
});

/** What a receiving mail client reads back. */
const readBack = (message: string) => simpleParser(Buffer.from(message, 'utf8'));

describe('composeMimeMessage', () => {
  it('when an e-mail is written, then a mail client reads back its sender, recipient, subject, Message-ID, date, headers, text and HTML', async () => {
    const now = new Date('2026-11-27T18:00:00Z');

    const mail = await readBack(composeMimeMessage(email(), now));

    expect(mail.from?.value).toEqual([{ name: 'vanish', address: 'notes@vanish.test' }]);
    expect((mail.to as { text: string }).text).toBe('reader@example.com');
    expect(mail.subject).toBe('A note was shared with you on vanish');
    expect(mail.messageId).toBe('<cmd-1@vanish.test>');
    expect(mail.date?.toISOString()).toBe(now.toISOString());
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
    const header = (key: string) => mail.headerLines.find((line) => line.key === key)?.line;
    expect(header('list-unsubscribe')).toBe('List-Unsubscribe: <https://vanish.test/unsubscribe/u1.abc.def>');
    expect(header('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    expect(header('mime-version')).toBe('MIME-Version: 1.0');
    expect(mail.text).toBe('Hello,\n\nhttps://vanish.test/abc\n');
    expect(mail.html).toBe('<p>Hello,</p>');
  });

  it('when the text has long lines, other scripts, "=", tabs and spaces at line ends, then every line stays within 76 characters and reads back exactly', async () => {
    const text = [
      'x'.repeat(200), `${'ü'.repeat(60)} end`, 'a = b', 'trailing space ', 'trailing tab\t', 'tab\tinside',
      '日本語のテキストはここにあります。'.repeat(5), 'العربية من اليمين إلى اليسار', '.', '..starts with dots', '', 'last',
    ].join('\n');
    const html = `<p style="font-family:Arial">${'долгая строка '.repeat(20)}</p>`;

    const message = composeMimeMessage(email({ text, html }));
    const mail = await readBack(message);

    expect(mail.text).toBe(text);
    expect(mail.html).toBe(html);
    const body = message.slice(message.indexOf('\r\n\r\n') + 4);
    for (const line of body.split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
    expect(message.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  it('when the subject or the sender\'s name is not ASCII, then it is sent as encoded words, folded, and read back as written', async () => {
    const subject = 'Ваша заметка на vanish была прочитана — 読まれました ✓ '.repeat(3).trim();

    const message = composeMimeMessage(email({ subject, from: 'vänish <notes@vanish.test>' }));
    const mail = await readBack(message);

    expect(mail.subject).toBe(subject);
    expect(mail.from?.value).toEqual([{ name: 'vänish', address: 'notes@vanish.test' }]);
    const subjectLines = /^Subject: .*(?:\r\n .*)*/m.exec(message)![0].split('\r\n');
    expect(subjectLines.length).toBeGreaterThan(1);
    for (const line of subjectLines) expect(line.length).toBeLessThanOrEqual(76);
  });

  it('when a header value holds a line break, then it cannot add a header: the subject is encoded, anything else is not written', async () => {
    const mail = await readBack(composeMimeMessage(email({ subject: 'Hello\r\nBcc: someone@example.com' })));
    expect(mail.bcc).toBeUndefined();
    expect(mail.subject).toBe('Hello\r\nBcc: someone@example.com');

    expect(() => composeMimeMessage(email({ to: 'a@example.com\nBcc: b@example.com' }))).toThrow('the To header holds a line break');
    expect(() => composeMimeMessage(email({ headers: { 'List-Unsubscribe': '<x>\r\nX-Injected: 1' } }))).toThrow('the List-Unsubscribe header holds a line break');
  });

  it('when two e-mails are written, then their boundaries differ', () => {
    const boundary = (message: string) => /boundary="([^"]+)"/.exec(message)?.[1];

    expect(boundary(composeMimeMessage(email()))).not.toBe(boundary(composeMimeMessage(email())));
  });

  const commands = (lang: string): MailCommand[] => [
    { kind: 'link', to: 'a@example.com', link: 'https://vanish.test/0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10', expiry_type: 'both', expires_at: '2026-01-02 00:00:00', max_views: 3, created_at: '2026-01-01 00:00:00', key_separately: true, lang },
    { kind: 'notification', to: 'a@example.com', read_at: '2026-01-01 00:00:00', views_left: 1, lang },
    { kind: 'request', to: 'a@example.com', submitted_at: '2026-01-01 00:00:00', lang } as MailCommand,
  ];

  it.each([...MAIL_LOCALES])('when every kind of e-mail is written in %s, then a mail client reads back its subject, text and HTML exactly', async (locale) => {
    for (const command of commands(locale)) {
      const rendered = renderEmail(command, 'https://vanish.test/unsubscribe/u1.T3pZ4xG0b9dLrQ2Xw8vJ6kYcHs5fNa1mEe7uVi3oPq0.Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0fE9dC8bA7z6Y5');

      const mail = await readBack(composeMimeMessage(email(rendered)));

      expect({ subject: mail.subject, text: mail.text, html: mail.html }).toEqual(rendered);
    }
  });
});

describe('quotedPrintable', () => {
  it('when a line is plain ASCII, short and without "=" or a space at its end, then it is written as it is', () => {
    expect(quotedPrintable('Hello,\nhttps://vanish.test/abc')).toBe('Hello,\r\nhttps://vanish.test/abc');
  });

  it('when a line has "=", a space at its end or bytes outside ASCII, then those are escaped', () => {
    expect(quotedPrintable('a = b \nü')).toBe('a =3D b=20\r\n=C3=BC');
  });
});

describe('envelopeSender', () => {
  it('when the sender has a display name, then the envelope takes its address', () => {
    expect(envelopeSender('vanish <notes@vanish.test>')).toBe('notes@vanish.test');
    expect(envelopeSender('notes@vanish.test')).toBe('notes@vanish.test');
  });
});
