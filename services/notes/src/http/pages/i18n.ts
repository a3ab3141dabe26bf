import { join } from 'node:path';
import {
  DEFAULT_LANGUAGE, LANGUAGES, MessageTranslator, isLanguage, loadTranslators, readCatalogue as readCatalogueIn,
  type Catalogue, type Language,
} from '@vanish/common';

export type { Catalogue, MessageValues } from '@vanish/common';

/**
 * The pages' languages (the shared list, issue 20). Each one is a catalogue of ICU messages in
 * `services/notes/locales/<locale>.json`, which a translator edits without reading code; a unit test fails
 * when a catalogue lacks a key of the English one or changes its placeholders.
 */
export const LOCALES = LANGUAGES;
export type Locale = Language;
export const DEFAULT_LOCALE: Locale = DEFAULT_LANGUAGE;
export const isLocale = isLanguage;

/** Read once at start, from the source tree or the built one alike (both sit three levels below the service). */
export const LOCALES_DIR = join(__dirname, '..', '..', '..', 'locales');

export function readCatalogue(locale: string, dir = LOCALES_DIR): Catalogue {
  return readCatalogueIn(dir, locale);
}

/** One language's page messages; dates and numbers go through Intl in that language. */
export class Translator extends MessageTranslator {
  private readonly precise = new Intl.DateTimeFormat(this.locale, { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });

  /** A moment to the second, in UTC (a receipt's timeline, where events can be seconds apart). */
  preciseUtc(date: Date): string {
    return `${this.precise.format(date)} UTC`;
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
  private readonly byLocale: ReadonlyMap<Locale, Translator>;

  constructor(dir = LOCALES_DIR) {
    this.byLocale = loadTranslators(dir, (locale, messages, fallback?: Translator) => new Translator(locale, messages, fallback));
  }

  get(locale: Locale): Translator {
    return this.byLocale.get(locale)!;
  }

  /** Each language named in itself, for the switcher. */
  names(): Array<{ locale: Locale; name: string }> {
    return LOCALES.map((locale) => ({ locale, name: this.get(locale).t('language.name') }));
  }
}
