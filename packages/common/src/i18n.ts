import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IntlMessageFormat } from 'intl-messageformat';

/**
 * Issue 20: the languages every reader-facing text is offered in (the notes pages, the e-mails, the
 * gateway's own error pages). Each service keeps its messages in `locales/<tag>.json` beside its code:
 * flat keys, ICU messages (`{name}` placeholders, plurals), edited by a translator without reading code.
 */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'pt-BR', 'ja', 'uk', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';
const RIGHT_TO_LEFT: ReadonlySet<string> = new Set(['ar']);

/** The reader's page settings, remembered in these first-party cookies by the notes pages' switcher. */
export const LANG_COOKIE = 'lang';
export const THEME_COOKIE = 'theme';
export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

export type Catalogue = Readonly<Record<string, string>>;
export type MessageValues = Record<string, string | number>;

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

export function isTheme(value: unknown): value is Theme {
  return typeof value === 'string' && (THEMES as readonly string[]).includes(value);
}

export function readCatalogue(dir: string, language: string): Catalogue {
  const parsed: unknown = JSON.parse(readFileSync(join(dir, `${language}.json`), 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`locales/${language}.json is not an object`);
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') throw new Error(`locales/${language}.json: ${key} is not a string`);
  }
  return parsed as Catalogue;
}

/** One language's messages, compiled on first use; a key the language lacks is said by its fallback (English). */
export class MessageTranslator {
  readonly dir: 'ltr' | 'rtl';
  private readonly compiled = new Map<string, IntlMessageFormat>();
  private readonly dateTime: Intl.DateTimeFormat;

  constructor(readonly locale: Language, private readonly messages: Catalogue, private readonly fallback?: MessageTranslator) {
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
}

/**
 * Every language's catalogue from `dir`, read once, each falling back to English for a key it lacks (the
 * catalogue tests forbid that, but a reader would still get English, never a raw key).
 */
export function loadTranslators<T extends MessageTranslator>(
  dir: string,
  create: (language: Language, messages: Catalogue, fallback?: T) => T,
): ReadonlyMap<Language, T> {
  const english = create(DEFAULT_LANGUAGE, readCatalogue(dir, DEFAULT_LANGUAGE));
  const byLanguage = new Map<Language, T>([[DEFAULT_LANGUAGE, english]]);
  for (const language of LANGUAGES) if (language !== DEFAULT_LANGUAGE) byLanguage.set(language, create(language, readCatalogue(dir, language), english));
  return byLanguage;
}

/** A language offered for a tag: exact (any case), else the same primary language (`de-CH`, `pt`), else none. */
export function nearestLanguage(tag: string | undefined): Language | undefined {
  if (!tag) return undefined;
  const exact = LANGUAGES.find((language) => language.toLowerCase() === tag.toLowerCase());
  if (exact) return exact;
  const primary = tag.split('-')[0]!.toLowerCase();
  return LANGUAGES.find((language) => language.split('-')[0]!.toLowerCase() === primary);
}

/** Only the two settings cookies are read; their values are returned as sent, for the caller to check. */
export function readSettingsCookies(header: string | undefined): { lang?: string; theme?: string } {
  const out: { lang?: string; theme?: string } = {};
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (name === LANG_COOKIE || name === THEME_COOKIE) out[name] = part.slice(at + 1).trim();
  }
  return out;
}

/** What a request needs from express to negotiate: its cookie header and Accept-Language matching. */
export interface LanguageRequest {
  get(name: 'cookie'): string | undefined;
  acceptsLanguages(...languages: string[]): string | false;
}

/**
 * The reader's language (issue 20): the switcher's choice (`lang` cookie, a language on the list), else
 * the best of Accept-Language (express's matching: `de-AT` gives German, `pt` Portuguese (Brazil)), else English.
 */
export function readerLanguage(req: LanguageRequest): Language {
  const chosen = readSettingsCookies(req.get('cookie')).lang;
  if (isLanguage(chosen)) return chosen;
  const accepted = req.acceptsLanguages(...LANGUAGES);
  return isLanguage(accepted) ? accepted : DEFAULT_LANGUAGE;
}

/** The reader's theme (`theme` cookie), else like the system. */
export function readerTheme(req: Pick<LanguageRequest, 'get'>): Theme {
  const chosen = readSettingsCookies(req.get('cookie')).theme;
  return isTheme(chosen) ? chosen : 'system';
}

type Element = { type: number; value?: unknown; options?: Record<string, { value: Element[] }>; children?: Element[] };
/** ICU element kinds that name a value the code passes in (literal 0 and `#` 7 do not). */
const KIND = ['', 'argument', 'number', 'date', 'time', 'select', 'plural', '', 'tag'];

/** `name:kind` of every placeholder a message uses, including those inside plural and select branches. */
function placeholders(message: string, language: string): string {
  const found = new Set<string>();
  const walk = (elements: Element[]): void => {
    for (const element of elements) {
      if (KIND[element.type]) found.add(`${String(element.value)}:${element.type === 1 || element.type === 2 ? 'value' : KIND[element.type]}`);
      for (const option of Object.values(element.options ?? {})) walk(option.value);
      walk(element.children ?? []);
    }
  };
  walk(new IntlMessageFormat(message, language).getAst() as unknown as Element[]);
  return [...found].sort().join();
}

/**
 * What a translation gets wrong against the English catalogue, for the catalogue tests of every service:
 * keys it lacks, keys English does not have, messages whose placeholders differ (a message that does not
 * parse throws), and messages that are empty or carry markup.
 */
export function catalogueProblems(english: Catalogue, catalogue: Catalogue, language: string): {
  missing: string[]; extra: string[]; placeholders: string[]; emptyOrMarkup: string[];
} {
  return {
    missing: Object.keys(english).filter((key) => !(key in catalogue)),
    extra: Object.keys(catalogue).filter((key) => !(key in english)),
    placeholders: Object.keys(english).filter((key) => key in catalogue && placeholders(catalogue[key]!, language) !== placeholders(english[key]!, 'en')),
    emptyOrMarkup: Object.keys(catalogue).filter((key) => catalogue[key]!.trim() === '' || /[<>]/.test(catalogue[key]!)),
  };
}
