import { catalogueProblems, nearestLanguage, readerLanguage, readerTheme } from './i18n';
import { parseTimestamp } from './time';

const request = (cookie: string | undefined, accepted: string | false = false) => ({ get: () => cookie, acceptsLanguages: () => accepted });

describe('the shared i18n helper', () => {
  it('when a translation lacks a key, adds one, changes a placeholder or carries markup, then each is named', () => {
    const english = { a: 'Hello {name}', b: '{n, plural, one {# view} other {# views}}', c: 'Bye' };
    expect(catalogueProblems(english, { a: 'Hallo {nom}', b: '{n, plural, other {# Abrufe}}', d: '<b>x</b>' }, 'de')).toEqual({
      missing: ['c'], extra: ['d'], placeholders: ['a'], emptyOrMarkup: ['d'],
    });
    expect(catalogueProblems(english, { a: 'Hallo {name}', b: '{n, plural, one {# Abruf} other {# Abrufe}}', c: 'Tschüss' }, 'de'))
      .toEqual({ missing: [], extra: [], placeholders: [], emptyOrMarkup: [] });
  });

  it('when the reader chose a language, then it wins over Accept-Language; an unknown choice is ignored', () => {
    expect(readerLanguage(request('theme=dark; lang=ar', 'de'))).toBe('ar');
    expect(readerLanguage(request('lang=xx', 'de'))).toBe('de');
    expect(readerLanguage(request(undefined))).toBe('en');
    expect(readerTheme(request('lang=ar; theme=light'))).toBe('light');
    expect(readerTheme(request('theme=neon'))).toBe('system');
  });

  it('when a tag has no catalogue of its own, then the nearest language is found or none', () => {
    expect([nearestLanguage('PT-br'), nearestLanguage('pt'), nearestLanguage('de-CH'), nearestLanguage('sw'), nearestLanguage(undefined)])
      .toEqual(['pt-BR', 'pt-BR', 'de', undefined, undefined]);
  });

  it('when a SPEC timestamp is read back, then it is that moment in UTC; anything else is no moment', () => {
    expect(parseTimestamp('2026-03-01 09:00:05')?.toISOString()).toBe('2026-03-01T09:00:05.000Z');
    expect(parseTimestamp('2026-03-01T09:00:05Z')).toBeUndefined();
    expect(parseTimestamp('2026-13-45 99:00:00')).toBeUndefined();
  });
});
