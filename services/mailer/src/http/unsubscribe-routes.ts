import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, isUndecodablePath, methodsOnly, pageHeaders, routeName } from '@vanish/common';
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
    if (!service.isValid(req.params.token)) return notFound(res);
    page(res, 200, 'Stop e-mails from vanish?', [
      `<p>Press the button to receive no more e-mails from ${PRODUCT_NAME} at the address this link was sent to.</p>`,
      '<form method="post" action=""><input type="hidden" name="List-Unsubscribe" value="One-Click">',
      '<button type="submit">Unsubscribe</button></form>',
    ]);
  });
  router.post('/unsubscribe/:token', async (req, res) => {
    if (!(await service.unsubscribe(req.params.token))) return notFound(res);
    page(res, 200, 'Unsubscribed', [`<p>Done: ${PRODUCT_NAME} will send no more e-mails to that address.</p>`]);
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
  if (isUndecodablePath(err)) {
    pageHeaders(req, res, () => notFound(res));
    return;
  }
  if (err instanceof AppError && err.statusCode < 500) {
    for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
    page(res, err.statusCode, err.statusCode === 405 ? 'Method not allowed' : 'Request not understood', [
      '<p>Open the unsubscribe link from the e-mail in a browser.</p>',
    ]);
    return;
  }
  next(err);
}

function notFound(res: Response): void {
  page(res, 404, 'Link not valid', ['<p>This unsubscribe link is not valid. Copy the whole link from the e-mail.</p>']);
}

function page(res: Response, status: number, title: string, body: string[]): void {
  res.status(status).type('html').send([
    '<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)} · ${PRODUCT_NAME}</title></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`, ...body, '</body></html>', '',
  ].join('\n'));
}
