import express, { Router, type NextFunction, type Request, type Response } from 'express';
import {
  DependencyUnavailableError, NotFoundError, apiHeaders, errorHandler, isUndecodablePath,
  methodsOnly, pageHeaders, routeName, type Logger, type Outages,
} from '@vanish/common';
import type { FormTokens } from '../http/form-tokens';
import { PageForbidden, answerPageError, pageContextFor, pageSettings, sameOriginOrThrow } from '../http/page-routes';
import { Translations } from '../http/pages/i18n';
import { hasCreatorMark } from './creator-mark';
import { confirmEndPage, receiptGuardPage, receiptNotFoundPage, receiptPage, walletPage } from './receipt-pages';
import type { ReceiptService } from './receipt-service';
import type { ReceiptSigner } from './receipt-signer';

/** Route templates: the only names logs and metrics see (never the receipt id). */
export const RECEIPT_ROUTES = {
  api: '/api/receipt/:id.php',
  page: '/r/:id',
  wallet: '/receipts',
  /** DECISIONS 16: a dead-man's switch's check-in. */
  checkin: '/r/:id/checkin',
  keys: '/.well-known/vanish-receipt-keys.json',
} as const;

export interface ReceiptRoutesDeps {
  receipts: ReceiptService;
  signer: ReceiptSigner;
  formTokens: FormTokens;
  publicBaseUrl: string;
  logger: Logger;
  /** The service's dependencies: a 503 for one that is down is logged as part of its outage. */
  outages?: Outages;
  isAvailable?: () => boolean;
  /** The pages' catalogues (issue 20): the receipt page speaks the reader's language. */
  translations?: Translations;
}

class ReceiptPageNotFound extends Error {}

/**
 * The receipt's JSON, mounted at /api/receipt before the API router (whose catch-all would answer
 * 404 first). Unknown, purged and malformed ids answer the same 404 (DECISIONS 12).
 */
export function createReceiptApiRoutes(deps: ReceiptRoutesDeps): Router {
  const router = Router();
  router.use(apiHeaders);
  router.all('/:id.php', routeName(RECEIPT_ROUTES.api), methodsOnly(['GET']), async (req, res) => {
    if (deps.isAvailable && !deps.isAvailable()) throw new DependencyUnavailableError('database', 'The note store is not available yet; retry shortly');
    const signed = await deps.receipts.readSigned(String(req.params.id));
    if (!signed) throw new NotFoundError('NOT_FOUND', 'Receipt not found');
    res.status(200).json({ success: true, ...signed });
  });
  // Anything else under /api/receipt is left to the API router's own 404.
  router.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => {
    next(isUndecodablePath(err) ? new NotFoundError('NOT_FOUND', 'Receipt not found') : err);
  });
  router.use(errorHandler(deps.logger.child('notes/receipts-api'), deps.outages));
  return router;
}

/** The receipt page, its "End this note now" form, and the public signing keys. */
export function createReceiptPageRoutes(deps: ReceiptRoutesDeps): Router {
  const router = Router();
  const context = pageContextFor(deps.translations ?? new Translations());
  const allowedOrigin = new URL(deps.publicBaseUrl).origin;
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 5, inflate: false });
  const send = (res: Response, status: number, page: string) => { res.status(status).type('html').send(page); };

  router.get(RECEIPT_ROUTES.keys, routeName(RECEIPT_ROUTES.keys), (_req, res) => {
    apiHeaders(_req, res, () => undefined);
    // Public and the same for everyone; verifiers may cache it briefly.
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.status(200).json(deps.signer.publicJwks);
  });

  // The language and theme switcher works here as on the other pages (a GET to the page itself).
  // The wallet: the same page for everyone, filled by its script from this browser's storage (DECISIONS 16).
  router.get(RECEIPT_ROUTES.wallet, routeName(RECEIPT_ROUTES.wallet), pageHeaders, pageSettings(deps.publicBaseUrl), (req, res) => {
    send(res, 200, walletPage(context(req, true)));
  });

  // GET /r/{id} shows the receipt to the browser that created the note (its creator mark) or to whoever
  // says so on the guard (`?as=creator`); anyone else first sees the guard (DECISIONS 16). `?end=confirm`
  // is the confirmation page, the only one with a form that ends the note. No GET ever ends anything.
  router.get('/r/:id', routeName(RECEIPT_ROUTES.page), pageHeaders, pageSettings(deps.publicBaseUrl), async (req, res) => {
    const id = String(req.params.id);
    const receipt = await deps.receipts.read(id);
    if (!receipt) throw new ReceiptPageNotFound();
    // The switcher's GET form keeps what this page was asked for: the creator's view, the confirmation.
    const keepQuery = ([['as', 'creator'], ['end', 'confirm']] as const).filter(([name, value]) => req.query[name] === value);
    const ctx = { ...context(req, true), keepQuery };
    const self = `/r/${id}`;
    const asCreator = `${self}?as=creator`;
    const ended = receipt.status === 'ended';
    if (req.query.end === 'confirm' && !ended) {
      send(res, 200, confirmEndPage(ctx, deps.formTokens.issue('end-note', id), asCreator));
      return;
    }
    if (!ended && req.query.as !== 'creator' && !hasCreatorMark(req.get('cookie'))) {
      send(res, 200, receiptGuardPage(ctx, asCreator));
      return;
    }
    const checkin = !ended && receipt.release?.state === 'held' ? deps.formTokens.issue('checkin', id) : null;
    send(res, 200, receiptPage(ctx, receipt, ended ? null : `${self}?end=confirm`, `/api/receipt/${id}.php`, undefined, checkin, `${self}/checkin`));
  });

  // DECISIONS 16, "I am still here": the same form discipline as ending the note (same origin, a
  // single-use token for this receipt and purpose). Whatever the outcome, the receipt shows it.
  router.post(RECEIPT_ROUTES.checkin, routeName(RECEIPT_ROUTES.checkin), pageHeaders, form, async (req, res) => {
    const id = String(req.params.id);
    sameOriginOrThrow(req, allowedOrigin);
    const token = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>).form_token : undefined;
    if (!(await deps.formTokens.redeem(token, 'checkin', id))) throw new PageForbidden();
    const outcome = await deps.receipts.checkIn(id);
    if (outcome.outcome === 'not_found') throw new ReceiptPageNotFound();
    // Back to the receipt itself: whoever could post this form was shown it (the guard is a warning, not a lock).
    res.redirect(303, `/r/${id}?as=creator`);
  });

  router.post('/r/:id', routeName(RECEIPT_ROUTES.page), pageHeaders, form, async (req, res) => {
    const id = String(req.params.id);
    sameOriginOrThrow(req, allowedOrigin);
    const token = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>).form_token : undefined;
    if (!(await deps.formTokens.redeem(token, 'end-note', id))) throw new PageForbidden();
    const outcome = await deps.receipts.endNow(id);
    if (outcome === 'not_found') throw new ReceiptPageNotFound();
    // Post/redirect/get: a reload shows the receipt instead of posting again.
    res.redirect(303, `/r/${id}`);
  });

  router.use('/r', (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const ctx = context(req, false);
    if (res.headersSent) { next(err); return; }
    if (err instanceof ReceiptPageNotFound || isUndecodablePath(err)) { send(res, 404, receiptNotFoundPage(ctx)); return; }
    answerPageError(err, req, res, ctx, deps);
  });
  return router;
}
