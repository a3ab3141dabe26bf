import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, isUndecodablePath, methodsOnly, pageHeaders, readerLanguage, readerTheme, routeName } from '@vanish/common';
import { type MailTranslator, mailTranslator } from '../domain/mail-i18n';
import { escapeHtml, PRODUCT_NAME } from '../domain/mail-templates';
import type { UnsubscribeService } from '../domain/unsubscribe-service';

/**
 * GET shows a confirmation page (link scanners that prefetch e-mail links must not unsubscribe
 * anyone); POST unsubscribes, from that page's button or as RFC 8058 one-click from the mail
 * client (`List-Unsubscribe=One-Click`, no cookies, no CSRF token by design: the token is the proof).
 */
export function unsubscribeRoutes(service: UnsubscribeService): Router {
  const router = Router();
  router.all('/unsubscribe/:token', routeName('unsubscribe'), pageHeaders, methodsOnly(['GET', 'POST']));
  router.get('/unsubscribe/:token', (req, res) => {
    const t = languageOf(req, res);
    if (!service.isValid(req.params.token)) return notFound(req, t, res);
    page(req, t, res, 200, t.t('unsubscribe.confirmTitle', { product }), [
      `<p>${escapeHtml(t.t('unsubscribe.confirmBody', { product }))}</p>`,
      '<form method="post" action=""><input type="hidden" name="List-Unsubscribe" value="One-Click">',
      `<button type="submit">${escapeHtml(t.t('unsubscribe.button'))}</button></form>`,
    ]);
  });
  router.post('/unsubscribe/:token', async (req, res) => {
    const t = languageOf(req, res);
    if (!(await service.unsubscribe(req.params.token))) return notFound(req, t, res);
    page(req, t, res, 200, t.t('unsubscribe.doneTitle'), [`<p>${escapeHtml(t.t('unsubscribe.doneBody', { product }))}</p>`]);
  });
  router.use(unsubscribePageErrors);
  return router;
}

/**
 * Refusals on the unsubscribe page are pages too. A token whose escapes cannot be decoded is no
 * token of ours: 404 like any other, and the router's error, which quotes the token, is not logged.
 * Server errors go on to the app's handler (which logs them).
 */
function unsubscribePageErrors(err: unknown, req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent || !req.path.startsWith('/unsubscribe/')) { next(err); return; }
  const t = languageOf(req, res);
  if (isUndecodablePath(err)) {
    pageHeaders(req, res, () => notFound(req, t, res));
    return;
  }
  if (err instanceof AppError && err.statusCode < 500) {
    for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
    page(req, t, res, err.statusCode, t.t(err.statusCode === 405 ? 'unsubscribe.methodTitle' : 'unsubscribe.badTitle'), [
      `<p>${escapeHtml(t.t('unsubscribe.badBody'))}</p>`,
    ]);
    return;
  }
  next(err);
}

const product = PRODUCT_NAME;

/**
 * Issue 20: the pages' own language cookie (set by the notes pages' switcher on the same origin), else
 * Accept-Language, else English. The unsubscribe link itself names no language.
 */
function languageOf(req: Request, res: Response): MailTranslator {
  res.vary('Cookie');
  res.vary('Accept-Language');
  return mailTranslator(readerLanguage(req));
}

function notFound(req: Request, t: MailTranslator, res: Response): void {
  page(req, t, res, 404, t.t('unsubscribe.invalidTitle'), [`<p>${escapeHtml(t.t('unsubscribe.invalidBody'))}</p>`]);
}

/**
 * Shown through the gateway on the pages' origin: in the pages' theme (their `theme` cookie) and through their
 * own stylesheet, so no inline style is needed under the page CSP.
 */
function page(req: Request, t: MailTranslator, res: Response, status: number, title: string, body: string[]): void {
  const theme = readerTheme(req);
  res.status(status).type('html').send([
    '<!DOCTYPE html>', `<html lang="${t.locale}" dir="${t.dir}"${theme === 'system' ? '' : ` data-theme="${theme}"`}><head><meta charset="utf-8">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)} · ${PRODUCT_NAME}</title>`,
    '<link rel="stylesheet" href="/assets/app.css"></head><body>',
    `<header><a href="/" class="brand">${PRODUCT_NAME}</a></header>`,
    '<main id="main">', `<h1>${escapeHtml(title)}</h1>`, '<div class="card">', ...body, '</div>', '</main>', '</body></html>', '',
  ].join('\n'));
}
