import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IntlMessageFormat } from 'intl-messageformat';

/**
 * The e-mails' languages (issue 20): the language of the page that created the note travels in the
 * sealed mail command as `lang`. Catalogues of ICU messages in `services/mailer/locales/<locale>.json`,
 * editable without reading code; a unit test fails when one lacks a key or changes a placeholder.
 */
export const MAIL_LOCALES = ['en', 'de', 'fr', 'es', 'pt-BR', 'ja', 'uk', 'ar'] as const;
export type MailLocale = (typeof MAIL_LOCALES)[number];
const RIGHT_TO_LEFT: ReadonlySet<string> = new Set(['ar']);

/** From src/domain and dist/domain alike. */
export const MAIL_LOCALES_DIR = join(__dirname, '..', '..', 'locales');

/** A BCP 47 tag as the pages send it (`de`, `pt-BR`); anything else is no language at all. */
export const LANG_TAG = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,2}$/;

export function readMailCatalogue(locale: string, dir = MAIL_LOCALES_DIR): Record<string, string> {
  const parsed: unknown = JSON.parse(readFileSync(join(dir, `${locale}.json`), 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`locales/${locale}.json is not an object`);
  for (const [key, value] of Object.entries(parsed)) if (typeof value !== 'string') throw new Error(`locales/${locale}.json: ${key} is not a string`);
  return parsed as Record<string, string>;
}

/** A language the mailer has, for a tag it was given: exact, else the same language, else English. */
export function mailLocaleFor(lang: string | undefined): MailLocale {
  if (!lang) return 'en';
  const exact = MAIL_LOCALES.find((locale) => locale.toLowerCase() === lang.toLowerCase());
  if (exact) return exact;
  const primary = lang.split('-')[0]!.toLowerCase();
  return MAIL_LOCALES.find((locale) => locale.split('-')[0]!.toLowerCase() === primary) ?? 'en';
}

export class MailTranslator {
  readonly dir: 'ltr' | 'rtl';
  private readonly compiled = new Map<string, IntlMessageFormat>();

  constructor(readonly locale: MailLocale, private readonly messages: Record<string, string>, private readonly fallback?: MailTranslator) {
    this.dir = RIGHT_TO_LEFT.has(locale) ? 'rtl' : 'ltr';
  }

  t(key: string, values?: Record<string, string | number>): string {
    const source = this.messages[key];
    if (source === undefined) {
      if (this.fallback) return this.fallback.t(key, values);
      throw new Error(`no message ${key}`);
    }
    let format = this.compiled.get(key);
    if (!format) {
      format = new IntlMessageFormat(source, this.locale);
      this.compiled.set(key, format);
    }
    return String(format.format(values));
  }

  /**
   * English keeps the unambiguous `2026-01-01 12:00:00 UTC` it always used; the others say the moment
   * their own way through Intl, always in UTC and saying so.
   */
  dateUtc(date: Date): string {
    if (this.locale === 'en') return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
    return `${new Intl.DateTimeFormat(this.locale, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
  }
}

let loaded: Map<MailLocale, MailTranslator> | undefined;

export function mailTranslator(lang: string | undefined): MailTranslator {
  if (!loaded) {
    const english = new MailTranslator('en', readMailCatalogue('en'));
    loaded = new Map([['en', english]]);
    for (const locale of MAIL_LOCALES) if (locale !== 'en') loaded.set(locale, new MailTranslator(locale, readMailCatalogue(locale), english));
  }
  return loaded.get(mailLocaleFor(lang))!;
}
