import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  DependencyUnavailableError, PAGE_CSP, apiHeaders, baseSecurityHeaders, errorHandler, formatTimestamp,
  isUndecodablePath, jsonBody, methodsOnly, pageHeaders, routeName, type Logger, type Outages,
} from '@vanish/common';
import { answerPageError, pageContextFor, pageSettings, requestAccess, sameOriginOrThrow } from '../http/page-routes';
import { Translations } from '../http/pages/i18n';
import { EMBED_JS, REQUESTS_JS, REQUEST_SEAL_JS } from './request-assets';
import {
  embeddedSendPage, inboxMessagePage, inboxPage, makeRequestPage, openedSubmissionPage, requestClosedPage, requestNotFoundPage, sendPage,
} from './request-pages';
import { RequestClosedError, RequestNotFoundError, type RequestService } from './request-service';
import { validateCreateRequest, validateSubmission } from './request-validator';

/** Route templates: the only names logs and metrics see (never a request or inbox id). */
export const REQUEST_ROUTES = {
  create: '/api/request.php',
  request: '/api/request/:id.php',
  inbox: '/api/inbox/:id.php',
  makePage: '/request',
  sendPage: '/q/:id',
  embedPage: '/embed/q/:id',
  inboxPage: '/i/:id',
  closePage: '/i/:id/close',
} as const;

export interface RequestRoutesDeps {
  requests: RequestService;
  publicBaseUrl: string;
  logger: Logger;
  outages?: Outages;
  isAvailable?: () => boolean;
  translations?: Translations;
  /** NODE_ENV=production: allowed origins must be https. */
  production: boolean;
}

/** The frame-ancestors of a request's embedded form: its allowed origins, or none. */
export function embedCsp(allowedOrigins: readonly string[]): string {
  const ancestors = allowedOrigins.length > 0 ? allowedOrigins.join(' ') : "'none'";
  return PAGE_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${ancestors}`);
}

function available(deps: RequestRoutesDeps): RequestHandler {
  return (_req, _res, next) => {
    next(deps.isAvailable && !deps.isAvailable() ? new DependencyUnavailableError('database', 'The note store is not available yet; retry shortly') : undefined);
  };
}

/**
 * The requests' API (DECISIONS 15), mounted at /api before the notes API, whose catch-all answers the rest:
 * create a request, read it as a sender, submit to it, list an inbox. Opening a submission is a page POST, as
 * reading any note is (SPEC 1).
 */
export function createRequestApiRoutes(deps: RequestRoutesDeps): Router {
  const router = Router();
  const json = jsonBody();
  const ready = available(deps);

  router.all('/request.php', routeName(REQUEST_ROUTES.create), apiHeaders, methodsOnly(['POST']), ready, ...json, async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const input = validateCreateRequest(body, { production: deps.production });
    const lang = typeof body?.lang === 'string' && /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,2}$/.test(body.lang) ? body.lang : undefined;
    const created = await deps.requests.create({ ...input, ...(lang ? { lang } : {}) });
    res.status(200).json({
      success: true,
      request_url: created.requestUrl,
      inbox_url: created.inboxUrl,
      request_ref: created.requestRef,
      expires_at: formatTimestamp(created.expiresAt),
      max_submissions: created.maxSubmissions,
      ...(created.webhookSecret !== undefined ? { webhook_secret: created.webhookSecret } : {}),
    });
  });

  router.all('/request/:id.php', routeName(REQUEST_ROUTES.request), apiHeaders, methodsOnly(['GET', 'POST']), ready, async (req, res, next) => {
    if (req.method !== 'POST') {
      const request = await deps.requests.forSender(String(req.params.id));
      if (request.status !== 'open') throw new RequestClosedError(request.status);
      res.status(200).json({
        success: true,
        label: request.label,
        public_key: request.publicKey,
        allow_files: request.allowFiles,
        expires_at: formatTimestamp(request.expiresAt),
      });
      return;
    }
    next();
  }, ...json, async (req, res) => {
    const input = validateSubmission(req.body);
    const submitted = await deps.requests.submit(String(req.params.id), input);
    res.status(200).json({
      success: true,
      submission: submitted.number,
      submitted_at: formatTimestamp(submitted.submittedAt),
      ...(submitted.receiptUrl ? { receipt_url: submitted.receiptUrl } : {}),
      // DECISIONS 14: one tus upload address per declared file, as a note's creation answers them.
      ...(submitted.uploads ? { uploads: submitted.uploads } : {}),
    });
  });

  router.all('/inbox/:id.php', routeName(REQUEST_ROUTES.inbox), apiHeaders, methodsOnly(['GET']), ready, async (req, res) => {
    const inbox = await deps.requests.inbox(String(req.params.id));
    res.status(200).json({
      success: true,
      request_url: inbox.requestUrl,
      request_ref: inbox.requestRef,
      label: inbox.label,
      public_key: inbox.publicKey,
      status: inbox.status,
      max_submissions: inbox.maxSubmissions,
      created_at: formatTimestamp(inbox.createdAt),
      expires_at: formatTimestamp(inbox.expiresAt),
      submissions: inbox.submissions.map((item) => ({
        submission: item.number,
        submitted_at: formatTimestamp(item.submittedAt),
        size: item.size,
        state: item.state,
        ephemeral_key: item.ephemeralKey,
        expires_at: formatTimestamp(item.expiresAt),
      })),
    });
  });

  // Only errors of the routes above reach here; an unknown path was passed on to the notes API.
  router.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => {
    next(isUndecodablePath(err) ? new RequestNotFoundError() : err);
  });
  router.use(errorHandler(deps.logger.child('notes/requests-api'), deps.outages));
  return router;
}

class InboxNotFound extends Error {}

/** The requests' pages and scripts: /request, /q/{id}, /embed/q/{id}, /i/{id}, /assets/{request-seal,requests,embed}.js. */
export function createRequestPageRoutes(deps: RequestRoutesDeps): Router {
  const router = Router();
  const context = pageContextFor(deps.translations ?? new Translations());
  const allowedOrigin = new URL(deps.publicBaseUrl).origin;
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 5, inflate: false });
  const send = (res: Response, status: number, page: string) => { res.status(status).type('html').send(page); };
  const settings = pageSettings(deps.publicBaseUrl);

  router.get('/assets/request-seal.js', routeName('/assets/request-seal.js'), pageHeaders, (_req, res) => { res.type('js').send(REQUEST_SEAL_JS); });
  router.get('/assets/requests.js', routeName('/assets/requests.js'), pageHeaders, (_req, res) => { res.type('js').send(REQUESTS_JS); });
  // Loaded by other sites' pages (with its integrity hash, so in CORS mode): readable from any origin.
  router.get('/assets/embed.js', routeName('/assets/embed.js'), (_req, res) => {
    baseSecurityHeaders(res);
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.type('js').send(EMBED_JS);
  });

  router.get(REQUEST_ROUTES.makePage, routeName(REQUEST_ROUTES.makePage), pageHeaders, settings, (req, res) => {
    send(res, 200, makeRequestPage(context(req, true), deps.publicBaseUrl));
  });

  router.get(REQUEST_ROUTES.sendPage, routeName(REQUEST_ROUTES.sendPage), pageHeaders, settings, async (req, res) => {
    const id = String(req.params.id);
    const request = await deps.requests.forSender(id);
    if (request.status !== 'open') { send(res, 410, requestClosedPage(context(req, true))); return; }
    send(res, 200, sendPage(context(req, true), id, request));
  });

  // The only page that may be framed (DECISIONS 15): by the request's allowed origins, none by default.
  router.get(REQUEST_ROUTES.embedPage, routeName(REQUEST_ROUTES.embedPage), async (req, res) => {
    baseSecurityHeaders(res);
    res.setHeader('Content-Security-Policy', embedCsp([]));
    res.vary('Accept-Language');
    const id = String(req.params.id);
    const ctx = context(req, false);
    let request;
    try {
      request = await deps.requests.forSender(id);
    } catch (err) {
      if (err instanceof RequestNotFoundError) { send(res, 404, requestNotFoundPage(ctx, true)); return; }
      throw err;
    }
    res.setHeader('Content-Security-Policy', embedCsp(request.allowedOrigins));
    if (request.status !== 'open') { send(res, 410, requestClosedPage(ctx, true)); return; }
    send(res, 200, embeddedSendPage(ctx, id, request));
  });

  router.get(REQUEST_ROUTES.inboxPage, routeName(REQUEST_ROUTES.inboxPage), pageHeaders, settings, async (req, res) => {
    const id = String(req.params.id);
    const inbox = await deps.requests.inbox(id).catch(notFoundAs(InboxNotFound));
    send(res, 200, inboxPage(context(req, true), id, inbox, deps.publicBaseUrl));
  });

  router.post(REQUEST_ROUTES.inboxPage, routeName(REQUEST_ROUTES.inboxPage), pageHeaders, form, async (req, res) => {
    const id = String(req.params.id);
    sameOriginOrThrow(req, allowedOrigin);
    const body = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
    const number = typeof body.submission === 'string' && /^\d{1,4}$/.test(body.submission) ? Number(body.submission) : NaN;
    const keyCheck = typeof body.key_check === 'string' && body.key_check !== '' ? body.key_check : null;
    const ctx = context(req, false);
    if (!Number.isInteger(number)) { send(res, 400, inboxMessagePage(ctx, id, ctx.t.t('inbox.gone'))); return; }
    // The key proof is the form's defence too: only the holder of the inbox link's key can make it.
    const result = await deps.requests.open(id, number, keyCheck, requestAccess(req)).catch(notFoundAs(InboxNotFound));
    if (result.outcome === 'revealed') { send(res, 200, openedSubmissionPage(ctx, id, result)); return; }
    if (result.outcome === 'key_required') { send(res, 400, inboxMessagePage(ctx, id, ctx.t.t('inbox.keyRefused'))); return; }
    // DECISIONS 14: as a note page says it: nothing was claimed while a file is still being uploaded.
    if (result.outcome === 'uploading') { send(res, 409, inboxMessagePage(ctx, id, ctx.t.t('inbox.uploading'))); return; }
    send(res, 410, inboxMessagePage(ctx, id, ctx.t.t('inbox.gone')));
  });

  router.post(REQUEST_ROUTES.closePage, routeName(REQUEST_ROUTES.closePage), pageHeaders, form, async (req, res) => {
    const id = String(req.params.id);
    sameOriginOrThrow(req, allowedOrigin);
    await deps.requests.close(id).catch(notFoundAs(InboxNotFound));
    // Post/redirect/get; the browser keeps the link's #key across the redirect.
    res.redirect(303, `/i/${id}`);
  });

  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) { next(err); return; }
    const embedded = req.path.startsWith('/embed/');
    const ctx = context(req, false);
    if (err instanceof RequestNotFoundError || err instanceof InboxNotFound || isUndecodablePath(err)) { send(res, 404, requestNotFoundPage(ctx, embedded)); return; }
    if (err instanceof RequestClosedError) { send(res, 410, requestClosedPage(ctx, embedded)); return; }
    answerPageError(err, req, res, ctx, deps);
  });
  return router;
}

function notFoundAs(kind: new () => Error) {
  return (err: unknown): never => {
    if (err instanceof RequestNotFoundError) throw new kind();
    throw err;
  };
}
