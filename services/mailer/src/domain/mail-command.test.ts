import type { MailCommand } from '@vanish/common';
import { InvalidMailCommand, parseEnvelope, parseMailCommand } from './mail-command';
import { renderEmail } from './mail-templates';

const link = { kind: 'link', to: 'a@example.com', link: 'https://vanish.test/abc', expiry_type: 'view', expires_at: '2026-01-31 00:00:00', max_views: 1, created_at: '2026-01-01 00:00:00' };

describe('parseMailCommand', () => {
  it('when the command is well formed, then it is returned with only the known fields', () => {
    expect(parseMailCommand(JSON.stringify({ ...link, note: 'creator text' }))).toEqual(link);
    expect(parseMailCommand(JSON.stringify({ kind: 'notification', to: 'a@example.com', read_at: '2026-01-01T10:00:00.000Z', views_left: 0 })))
      .toEqual({ kind: 'notification', to: 'a@example.com', read_at: '2026-01-01T10:00:00.000Z', views_left: 0 });
  });

  it('when a read notification carries its note\'s receipt link, then the link is kept (DECISIONS 12); a non-http one is refused', () => {
    const notification = { kind: 'notification', to: 'a@example.com', read_at: '2026-01-01T10:00:00.000Z', views_left: 0 };
    const receiptUrl = `https://vanish.test/r/${'R'.repeat(43)}`;
    expect(parseMailCommand(JSON.stringify({ ...notification, receipt_url: receiptUrl }))).toEqual({ ...notification, receipt_url: receiptUrl });
    expect(() => parseMailCommand(JSON.stringify({ ...notification, receipt_url: 'javascript:alert(1)' }))).toThrow(InvalidMailCommand);
    const email = renderEmail({ ...notification, receipt_url: receiptUrl } as MailCommand, 'https://vanish.test/unsubscribe/t');
    expect(email.text).toContain(`lets you end it now:\n${receiptUrl}\n`);
    expect(email.html).toContain(`<a href="${receiptUrl}">`);
    expect(renderEmail(notification as MailCommand, 'https://vanish.test/unsubscribe/t').text).not.toContain('/r/');
  });

  it.each([
    ['a header-injecting address', { ...link, to: 'a@example.com\r\nBcc: x@y.z' }],
    ['a display name', { ...link, to: 'Alice <a@example.com>' }],
    ['a javascript link', { ...link, link: 'javascript:alert(1)' }],
    ['a link with a quote', { ...link, link: 'https://vanish.test/"onmouseover=x' }],
    ['an unknown kind', { ...link, kind: 'newsletter' }],
    ['a bad timestamp', { ...link, created_at: 'yesterday' }],
    ['a language that is no tag', { ...link, lang: 'de"><script>' }],
    ['a language that is not a string', { ...link, lang: 7 }],
    ['an overlong language', { ...link, lang: `de-${'a'.repeat(40)}` }],
  ])('when the command has %s, then it is invalid', (_name, value) => {
    expect(() => parseMailCommand(JSON.stringify(value))).toThrow(InvalidMailCommand);
  });

  it('when the command names the language of the page that made the note, then it is kept; absent, there is none (English)', () => {
    expect(parseMailCommand(JSON.stringify({ ...link, lang: 'pt-BR' }))).toEqual({ ...link, lang: 'pt-BR' });
    expect(parseMailCommand(JSON.stringify({ kind: 'notification', to: 'a@example.com', read_at: '2026-01-01 10:00:00', views_left: 1, lang: 'ja' })))
      .toMatchObject({ lang: 'ja' });
    expect(parseMailCommand(JSON.stringify(link))).not.toHaveProperty('lang');
  });

  it('when the envelope is not a mail.send v1 envelope, then it is invalid', () => {
    expect(() => parseEnvelope('{}')).toThrow(InvalidMailCommand);
    expect(() => parseEnvelope('nope')).toThrow(InvalidMailCommand);
    expect(parseEnvelope(JSON.stringify({ id: 'x1', event: 'mail.send', version: 1, timestamp: 't', sealed: 's' })).id).toBe('x1');
  });
  it('when a request command comes (DECISIONS 15), then it passes with its counts, and its e-mail holds no link in any language', () => {
    const command = parseMailCommand(JSON.stringify({ kind: 'request', to: 'a@example.com', submitted_at: '2026-01-01 10:00:00', number: 2, max_submissions: 3, lang: 'ar' }));
    expect(command).toEqual({ kind: 'request', to: 'a@example.com', submitted_at: '2026-01-01 10:00:00', number: 2, max_submissions: 3, lang: 'ar' });
    expect(() => parseMailCommand(JSON.stringify({ kind: 'request', to: 'a@example.com', submitted_at: '2026-01-01 10:00:00', number: 0, max_submissions: 3 }))).toThrow();
    for (const lang of ['en', 'de', 'ja', 'ar']) {
      const mail = renderEmail({ ...command, lang } as MailCommand, 'https://vanish.test/unsubscribe/x');
      expect(mail.subject).toContain('vanish');
      expect(mail.text.replace('https://vanish.test/unsubscribe/x', '')).not.toMatch(/https?:/);
    }
  });
});
