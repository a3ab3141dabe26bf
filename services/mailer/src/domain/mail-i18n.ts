import { join } from 'node:path';
import {
  DEFAULT_LANGUAGE, LANGUAGES, MessageTranslator, loadTranslators, nearestLanguage, readCatalogue, type Catalogue, type Language,
} from '@vanish/common';

/**
 * The e-mails' languages (the shared list, issue 20): the language of the page that created the note
 * travels in the sealed mail command as `lang`. Catalogues of ICU messages in
 * `services/mailer/locales/<locale>.json`, editable without reading code; a unit test fails when one lacks a
 * key or changes a placeholder.
 */
export const MAIL_LOCALES = LANGUAGES;
export type MailLocale = Language;

/** From src/domain and dist/domain alike. */
export const MAIL_LOCALES_DIR = join(__dirname, '..', '..', 'locales');

/** A BCP 47 tag as the pages send it (`de`, `pt-BR`); anything else is no language at all. */
export const LANG_TAG = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,2}$/;

export function readMailCatalogue(locale: string, dir = MAIL_LOCALES_DIR): Catalogue {
  return readCatalogue(dir, locale);
}

/** A language the mailer has, for a tag it was given: exact, else the same language, else English. */
export function mailLocaleFor(lang: string | undefined): MailLocale {
  return nearestLanguage(lang) ?? DEFAULT_LANGUAGE;
}

export class MailTranslator extends MessageTranslator {
  /**
   * English keeps the unambiguous `2026-01-01 12:00:00 UTC` it always used; the others say the moment
   * their own way through Intl, always in UTC and saying so.
   */
  override dateUtc(date: Date): string {
    if (this.locale === 'en') return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
    return super.dateUtc(date);
  }
}

let loaded: ReadonlyMap<MailLocale, MailTranslator> | undefined;

export function mailTranslator(lang: string | undefined): MailTranslator {
  loaded ??= loadTranslators(MAIL_LOCALES_DIR, (locale, messages, fallback?: MailTranslator) => new MailTranslator(locale, messages, fallback));
  return loaded.get(mailLocaleFor(lang))!;
}
