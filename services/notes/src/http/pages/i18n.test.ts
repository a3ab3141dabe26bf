import { readdirSync } from 'node:fs';
import { IntlMessageFormat } from 'intl-messageformat';
import { LOCALES, LOCALES_DIR, Translations, readCatalogue } from './i18n';

type Element = { type: number; value?: unknown; options?: Record<string, { value: Element[] }>; children?: Element[] };
/** ICU element kinds that name a value the code passes in (literal 0 and `#` 7 do not). */
const KIND = ['', 'argument', 'number', 'date', 'time', 'select', 'plural', '', 'tag'];

/** `name:kind` of every placeholder a message uses, including those inside plural and select branches. */
function placeholders(message: string, locale: string): string[] {
  const found = new Set<string>();
  const walk = (elements: Element[]) => {
    for (const element of elements) {
      if (KIND[element.type]) found.add(`${String(element.value)}:${element.type === 1 || element.type === 2 ? 'value' : KIND[element.type]}`);
      for (const option of Object.values(element.options ?? {})) walk(option.value);
      walk(element.children ?? []);
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst() as unknown as Element[]);
  return [...found].sort();
}

describe('the pages\' message catalogues', () => {
  const english = readCatalogue('en');

  it('when the locales folder is listed, then every catalogue in it is a language the pages offer, and each one is there', () => {
    const files = readdirSync(LOCALES_DIR).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)).sort();
    expect(files).toEqual([...LOCALES].sort());
  });

  it.each(LOCALES.filter((locale) => locale !== 'en'))('when %s is compared with English, then it has exactly the same keys', (locale) => {
    const catalogue = readCatalogue(locale);
    const missing = Object.keys(english).filter((key) => !(key in catalogue));
    const extra = Object.keys(catalogue).filter((key) => !(key in english));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it.each([...LOCALES])('when each %s message is parsed, then it uses the same placeholders as the English one', (locale) => {
    const catalogue = readCatalogue(locale);
    const differing = Object.keys(english).filter((key) => key in catalogue)
      .filter((key) => placeholders(catalogue[key]!, locale).join() !== placeholders(english[key]!, 'en').join());
    expect(differing).toEqual([]);
  });

  it.each([...LOCALES])('when a %s message is empty or untranslated markup, then the test says which', (locale) => {
    const catalogue = readCatalogue(locale);
    expect(Object.keys(catalogue).filter((key) => catalogue[key]!.trim() === '' || /[<>]/.test(catalogue[key]!))).toEqual([]);
  });

  it('when a message has plurals, then each language picks its own form and formats numbers through Intl', () => {
    const translations = new Translations();
    expect(translations.get('en').t('note.wrongPasscode', { tries: 1 })).toContain('1 try left');
    expect(translations.get('de').t('create.contentHint', { max: 10_000 })).toContain('10.000');
    expect(translations.get('uk').t('revealed.left', { left: 3 })).toContain('3 рази');
    expect(translations.get('ar').dir).toBe('rtl');
    expect(translations.get('ja').dir).toBe('ltr');
    expect(translations.get('fr').dateUtc(new Date('2026-03-01T12:00:00Z'))).toMatch(/1(er)? mars 2026.*12:00 UTC/);
  });
});
