import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IntlMessageFormat } from 'intl-messageformat';

/**
 * The pages' languages. Each one is a catalogue of ICU messages in `services/notes/locales/<locale>.json`
 * (flat keys, plain text, ICU `{name}` placeholders and plurals), which a translator edits without
 * reading code; a unit test fails when a catalogue lacks a key of the English one or changes its placeholders.
 */
export const LOCALES = ['en', 'de', 'fr', 'es', 'pt-BR', 'ja', 'uk', 'ar'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
const RIGHT_TO_LEFT: ReadonlySet<Locale> = new Set(['ar']);

/** Read once at start, from the source tree or the built one alike (both sit three levels below the service). */
export const LOCALES_DIR = join(__dirname, '..', '..', '..', 'locales');

export type Catalogue = Readonly<Record<string, string>>;

export function readCatalogue(locale: string, dir = LOCALES_DIR): Catalogue {
  const parsed: unknown = JSON.parse(readFileSync(join(dir, `${locale}.json`), 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`locales/${locale}.json is not an object`);
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') throw new Error(`locales/${locale}.json: ${key} is not a string`);
  }
  return parsed as Catalogue;
}

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

export type MessageValues = Record<string, string | number>;

/** One language's messages, compiled once; dates and numbers go through Intl in that language. */
export class Translator {
  readonly dir: 'ltr' | 'rtl';
  private readonly compiled = new Map<string, IntlMessageFormat>();
  private readonly dateTime: Intl.DateTimeFormat;

  constructor(readonly locale: Locale, private readonly messages: Catalogue, private readonly fallback?: Translator) {
    this.dir = RIGHT_TO_LEFT.has(locale) ? 'rtl' : 'ltr';
    this.dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });
  }

  t(key: string, values?: MessageValues): string {
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

  /** A moment, in UTC, said the way this language says it (`November 25, 2026 at 9:00 AM UTC`). */
  dateUtc(date: Date): string {
    return `${this.dateTime.format(date)} UTC`;
  }

  number(value: number): string {
    return new Intl.NumberFormat(this.locale).format(value);
  }

  /** `5 minutes`, `1 Stunde`, `7日間`: a preset's length in this language's own words (Intl). */
  duration(value: number, unit: 'minute' | 'hour' | 'day' | 'week'): string {
    return new Intl.NumberFormat(this.locale, { style: 'unit', unit, unitDisplay: 'long' }).format(value);
  }
}

export class Translations {
  private readonly byLocale = new Map<Locale, Translator>();

  constructor(dir = LOCALES_DIR) {
    const english = new Translator(DEFAULT_LOCALE, readCatalogue(DEFAULT_LOCALE, dir));
    this.byLocale.set(DEFAULT_LOCALE, english);
    // A key a translation lacks (the unit test forbids it) would still show in English, never as a raw key.
    for (const locale of LOCALES) if (locale !== DEFAULT_LOCALE) this.byLocale.set(locale, new Translator(locale, readCatalogue(locale, dir), english));
  }

  get(locale: Locale): Translator {
    return this.byLocale.get(locale)!;
  }

  /** Each language named in itself, for the switcher. */
  names(): Array<{ locale: Locale; name: string }> {
    return LOCALES.map((locale) => ({ locale, name: this.get(locale).t('language.name') }));
  }
}
