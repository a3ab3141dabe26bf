import { join } from 'node:path';
import {
  MessageTranslator, loadTranslators, readerLanguage, readerTheme, type AppError, type Language, type LanguageRequest,
} from '@vanish/common';

/** From src/http and dist/http alike. */
export const GATEWAY_LOCALES_DIR = join(__dirname, '..', '..', 'locales');

/** The gateway's own refusals, each said by one pair of messages (`error.<kind>.title` and `.body`). */
const KIND_BY_CODE: Readonly<Record<string, string>> = {
  NOT_FOUND: 'notFound',
  METHOD_NOT_ALLOWED: 'method',
  RATE_LIMITED: 'rateLimited',
  UPSTREAM_UNAVAILABLE: 'unavailable',
  UPSTREAM_TIMEOUT: 'timeout',
  SERVICE_UNAVAILABLE: 'busy',
  HTTPS_REQUIRED: 'https',
  PAYLOAD_TOO_LARGE: 'tooLarge',
};

export function errorKind(appError: Pick<AppError, 'code' | 'statusCode'>): string {
  return KIND_BY_CODE[appError.code] ?? (appError.statusCode >= 500 ? 'failed' : 'bad');
}

/** Retry-After said in words: seconds up to two minutes, else whole minutes (a view limit's window is an hour). */
function retryAdvice(t: MessageTranslator, retryAfter: string | undefined): string[] {
  const seconds = Number(retryAfter);
  if (!Number.isInteger(seconds) || seconds <= 0) return [];
  return [seconds <= 120 ? t.t('page.retryAfter', { seconds }) : t.t('page.retryAfterMinutes', { minutes: Math.ceil(seconds / 60) })];
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The small HTML page a browser gets when the gateway answers a web route itself (issue 20): in the
 * reader's language (the pages' `lang` cookie, else Accept-Language, else English), right to left for
 * Arabic, and in the reader's theme through the pages' own stylesheet (`/assets/app.css`, served by the
 * notes service: when that service is the one that cannot be reached, the page shows unstyled, still
 * readable). No inline script or style, so the strict page CSP stands.
 */
export class ErrorPages {
  constructor(private readonly translators: ReadonlyMap<Language, MessageTranslator>) {}

  static load(dir = GATEWAY_LOCALES_DIR): ErrorPages {
    return new ErrorPages(loadTranslators(dir, (language, messages, fallback) => new MessageTranslator(language, messages, fallback)));
  }

  render(req: LanguageRequest & { method?: string; path?: string }, appError: AppError): string {
    const t = this.translators.get(readerLanguage(req))!;
    const theme = readerTheme(req);
    // The create form's refusal is said to a writer: the note was not made, and the text is one step back.
    const creating = req.method === 'POST' && req.path === '/';
    const kind = errorKind(appError) === 'rateLimited' && creating ? 'rateLimitedCreate' : errorKind(appError);
    const title = t.t(`error.${kind}.title`);
    const paragraphs = [t.t(`error.${kind}.body`), ...retryAdvice(t, appError.headers['Retry-After'])];
    return [
      '<!doctype html>',
      `<html lang="${t.locale}" dir="${t.dir}"${theme === 'system' ? '' : ` data-theme="${theme}"`}>`,
      '<head>',
      '<meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      '<meta name="robots" content="noindex, nofollow">',
      '<link rel="icon" href="data:,">',
      `<title>${escapeHtml(title)} · vanish</title>`,
      '<link rel="stylesheet" href="/assets/app.css">',
      '</head>',
      '<body>',
      '<header><a href="/" class="brand">vanish</a></header>',
      '<main id="main">',
      `<h1>${escapeHtml(title)}</h1>`,
      '<div class="card">',
      ...paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`),
      // The code is isolated (U+2068 … U+2069) so that in a right-to-left sentence it keeps its own direction.
      `<p class="hint" id="error-code">${escapeHtml(t.t('page.code', { code: `\u2068${appError.code}\u2069` }))}</p>`,
      `<p><a href="/">${escapeHtml(t.t('page.home'))}</a></p>`,
      '</div>',
      '</main>',
      '</body>',
      '</html>',
      '',
    ].join('\n');
  }
}
