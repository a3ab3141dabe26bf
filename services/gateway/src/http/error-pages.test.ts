import { readdirSync } from 'node:fs';
import {
  LANGUAGES, MethodNotAllowedError, NotFoundError, RateLimitedError, ServiceUnavailableError, UpstreamTimeoutError,
  UpstreamUnavailableError, ValidationError, InternalError, catalogueProblems, readCatalogue, type AppError,
} from '@vanish/common';
import { ErrorPages, GATEWAY_LOCALES_DIR, errorKind } from './error-pages';

/** What ErrorPages reads from a request, answered the way express answers it. */
function request(headers: { cookie?: string; acceptLanguage?: string }) {
  return {
    get: (name: 'cookie') => (name === 'cookie' ? headers.cookie : undefined),
    acceptsLanguages: (...languages: string[]) => {
      const wanted = (headers.acceptLanguage ?? '').split(',').map((part) => part.split(';')[0]!.trim().toLowerCase()).filter(Boolean);
      for (const tag of wanted) {
        const found = languages.find((language) => language.toLowerCase() === tag || language.toLowerCase().split('-')[0] === tag);
        if (found) return found;
      }
      return false as const;
    },
  };
}

/** Every refusal the gateway writes itself on a web route. */
const ERRORS: AppError[] = [
  new NotFoundError('NOT_FOUND', 'Page not found'),
  new MethodNotAllowedError(['GET', 'HEAD', 'OPTIONS']),
  new RateLimitedError(3600),
  new UpstreamUnavailableError(),
  new UpstreamTimeoutError(),
  new ServiceUnavailableError(),
  new ValidationError('HTTPS_REQUIRED', 'HTTPS is required', { parameter: null }),
  new ValidationError('PAYLOAD_TOO_LARGE', 'Request body exceeds 128 KiB', { parameter: null }),
  new ValidationError('INVALID_JSON', 'Request body could not be read'),
  new InternalError(),
];

describe('the gateway\'s error pages (issue 20)', () => {
  const english = readCatalogue(GATEWAY_LOCALES_DIR, 'en');
  const pages = ErrorPages.load();

  it('when the locales folder is listed, then it holds exactly the languages the pages offer', () => {
    expect(readdirSync(GATEWAY_LOCALES_DIR).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -5)).sort()).toEqual([...LANGUAGES].sort());
  });

  it.each([...LANGUAGES])('when %s is compared with English, then it has the same keys and placeholders, and no empty message or markup', (language) => {
    expect(catalogueProblems(english, readCatalogue(GATEWAY_LOCALES_DIR, language), language)).toEqual({ missing: [], extra: [], placeholders: [], emptyOrMarkup: [] });
  });

  it('when each refusal is named, then each has its own title and body in the catalogue', () => {
    const kinds = ERRORS.map(errorKind);
    expect(new Set(kinds).size).toBe(ERRORS.length);
    for (const kind of kinds) expect([english[`error.${kind}.title`], english[`error.${kind}.body`]]).toEqual([expect.any(String), expect.any(String)]);
  });

  it.each(LANGUAGES.filter((language) => language !== 'en'))('when the reader chose %s, then every error page is in it, with no English sentence left', (language) => {
    const englishTexts = Object.values(english).map((message) => message.split('{')[0]!.trim()).filter((text) => text.length >= 12);
    for (const error of ERRORS) {
      const page = pages.render(request({ cookie: `lang=${language}` }), error);
      expect(page).toContain(`<html lang="${language}" dir="${language === 'ar' ? 'rtl' : 'ltr'}">`);
      expect({ code: error.code, english: englishTexts.filter((text) => page.includes(text)) }).toEqual({ code: error.code, english: [] });
      expect(page).toContain(error.code);
    }
  });

  it('when no cookie is set, then Accept-Language chooses, else English; a theme cookie sets the page\'s theme', () => {
    const limited = new RateLimitedError(3600);
    expect(pages.render(request({ acceptLanguage: 'de-AT,de;q=0.9' }), limited)).toContain('<h1>Zu viele Anfragen</h1>');
    expect(pages.render(request({ acceptLanguage: 'sw' }), limited)).toContain('<h1>Too many requests</h1>');
    const arabicDark = pages.render(request({ cookie: 'theme=dark; lang=ar', acceptLanguage: 'de' }), limited);
    expect(arabicDark).toContain('<html lang="ar" dir="rtl" data-theme="dark">');
    expect(pages.render(request({ cookie: 'lang="><script>; theme=neon' }), limited)).toContain('<html lang="en" dir="ltr">');
  });

  it('when the answer says when to retry, then the page says it in words: seconds, or minutes for a long window', () => {
    expect(pages.render(request({}), new RateLimitedError(3600))).toContain('You can try again in 60 minutes.');
    expect(pages.render(request({}), new ServiceUnavailableError())).toContain('You can try again in 5 seconds.');
    expect(pages.render(request({ cookie: 'lang=uk' }), new RateLimitedError(2))).toContain('через 2 секунди');
    expect(pages.render(request({}), new UpstreamUnavailableError())).not.toContain('try again in');
  });

  it('when a page is written, then it carries no inline script or style and loads only the pages\' own stylesheet', () => {
    const page = pages.render(request({ cookie: 'theme=light' }), new UpstreamTimeoutError());
    expect(page).not.toMatch(/<script|<style|style=/);
    expect(page.match(/(?:href|src)="[^"]*"/g)).toEqual(['href="data:,"', 'href="/assets/app.css"', 'href="/"', 'href="/"']);
  });

  it.each([...LANGUAGES])('when the create form is refused by the limit in %s, then the page speaks to a writer, and a reader\'s 429 keeps the reader\'s words', (language) => {
    const catalogue = readCatalogue(GATEWAY_LOCALES_DIR, language);
    const creating = pages.render({ ...request({ cookie: `lang=${language}` }), method: 'POST', path: '/' }, new RateLimitedError(3600));
    expect(creating).toContain(`<h1>${catalogue['error.rateLimitedCreate.title']}</h1>`);
    expect(creating).not.toContain(catalogue['error.rateLimited.body']!);
    const reading = pages.render({ ...request({ cookie: `lang=${language}` }), method: 'GET', path: '/0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10' }, new RateLimitedError(3600));
    expect(reading).toContain(`<h1>${catalogue['error.rateLimited.title']}</h1>`);
  });
});
