import { readdirSync } from 'node:fs';
import { catalogueProblems, type MailCommand } from '@vanish/common';
import { MAIL_LOCALES, MAIL_LOCALES_DIR, mailLocaleFor, readMailCatalogue } from './mail-i18n';
import { renderEmail } from './mail-templates';

const LINK = 'https://vanish.test/0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10';
const link = (lang?: string): MailCommand => ({
  kind: 'link', to: 'a@example.com', link: LINK, expiry_type: 'both', expires_at: '2026-01-02 00:00:00', max_views: 3,
  created_at: '2026-01-01 00:00:00', key_separately: true, ...(lang ? { lang } : {}),
});

describe('the e-mails\' message catalogues', () => {
  const english = readMailCatalogue('en');

  it('when the locales folder is listed, then it holds exactly the languages the mailer offers', () => {
    expect(readdirSync(MAIL_LOCALES_DIR).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -5)).sort()).toEqual([...MAIL_LOCALES].sort());
  });

  it.each([...MAIL_LOCALES])('when %s is compared with English, then it has the same keys and the same placeholders, and no empty message or markup', (locale) => {
    expect(catalogueProblems(english, readMailCatalogue(locale), locale)).toEqual({ missing: [], extra: [], placeholders: [], emptyOrMarkup: [] });
  });

  it('when a tag has no catalogue of its own, then its language or English is used', () => {
    expect(mailLocaleFor('pt-BR')).toBe('pt-BR');
    expect(mailLocaleFor('pt')).toBe('pt-BR');
    expect(mailLocaleFor('de-CH')).toBe('de');
    expect(mailLocaleFor('sw')).toBe('en');
    expect(mailLocaleFor(undefined)).toBe('en');
  });

  it.each(MAIL_LOCALES.filter((locale) => locale !== 'en'))('when the command says %s, then the e-mail is written in it, with the link intact', (locale) => {
    const email = renderEmail(link(locale), 'https://vanish.test/unsubscribe/t');
    const englishEmail = renderEmail(link(), 'https://vanish.test/unsubscribe/t');
    expect(email.subject).not.toBe(englishEmail.subject);
    expect(email.subject).toBe(readMailCatalogue(locale)['link.subject']!.replace('{product}', 'vanish'));
    expect(email.text).toContain(LINK);
    expect(email.html).toContain(`<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}">`);
    expect(email.text).not.toContain('{');
  });

  it('when no language is given, then the e-mail is the English one it always was', () => {
    const email = renderEmail(link(), 'https://vanish.test/unsubscribe/t');
    expect(email.subject).toBe('A note was shared with you on vanish');
    expect(email.text).toContain('after 3 views or on 2026-01-02 00:00:00 UTC, whichever comes first');
    expect(email.text).toContain('missing its key on purpose');
    const notification = renderEmail({ kind: 'notification', to: 'a@example.com', read_at: '2026-01-01 10:00:00', views_left: 1, lang: 'de' }, 'https://vanish.test/u');
    expect(notification.subject).toBe('Ihre Notiz auf vanish wurde gelesen');
    expect(notification.text).toContain('1. Januar 2026 um 10:00 UTC');
  });
});
