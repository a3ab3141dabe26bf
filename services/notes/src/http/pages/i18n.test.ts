import { readdirSync } from 'node:fs';
import { catalogueProblems } from '@vanish/common';
import { LOCALES, LOCALES_DIR, Translations, readCatalogue } from './i18n';

describe('the pages\' message catalogues', () => {
  const english = readCatalogue('en');

  it('when the locales folder is listed, then every catalogue in it is a language the pages offer, and each one is there', () => {
    const files = readdirSync(LOCALES_DIR).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)).sort();
    expect(files).toEqual([...LOCALES].sort());
  });

  it.each([...LOCALES])('when %s is compared with English, then it has the same keys and placeholders, and no empty message or markup', (locale) => {
    expect(catalogueProblems(english, readCatalogue(locale), locale)).toEqual({ missing: [], extra: [], placeholders: [], emptyOrMarkup: [] });
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
