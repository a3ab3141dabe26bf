import express, { type NextFunction, type Request, type Response, Router } from 'express';
import QRCode from 'qrcode';
import { AppError, type Logger, ValidationError, isUndecodablePath, pageHeaders, routeName } from '@vanish/common';
import { validateCreateNote } from '../domain/create-note-validator';
import type { NotesApi } from '../domain/notes';
import type { RequestAccess } from '../domain/note-webhooks';
import type { FormTokens } from './form-tokens';
import { APP_CSS, APP_JS, ENVELOPE_JS } from './pages/assets';
import {
  KEY_MISSING, type CreateFormValues, createPage, createdPage, errorPage, forbiddenPage, notFoundPage, notePage, revealedPage,
} from './pages/templates';

export interface PageRoutesDeps {
  notes: NotesApi;
  formTokens: FormTokens;
  publicBaseUrl: string;
  logger: Logger;
  /** Told of every GET/HEAD of a note page, for the note's receipt (DECISIONS 12). */
  receipts?: { notePageFetched(uuid: string, userAgent: string | undefined): Promise<void> };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FORM_FIELDS = ['content', 'expiry_type', 'expiry_time', 'max_views', 'passcode', 'notification_email', 'send_link_email', 'webhook_url'] as const;
const USER_AGENT_MAX_LENGTH = 512;

class PageNotFound extends Error {}
export class PageForbidden extends Error {}

/**
 * DECISIONS 9: the only place note content is ever shown. GET never consumes a view (link
 * previews fetch links); only the reveal POST does, and only with a same-origin, single-use
 * form token.
 */
export function createPageRoutes(deps: PageRoutesDeps): Router {
  const router = Router();
  const allowedOrigin = new URL(deps.publicBaseUrl).origin;
  const form = express.urlencoded({ extended: false, limit: '128kb', parameterLimit: 20, inflate: false });
  const send = (res: Response, status: number, page: string) => {
    res.status(status).type('html').send(page);
  };

  router.use(pageHeaders);

  router.get('/assets/app.css', routeName('/assets/app.css'), (_req, res) => { res.type('css').send(APP_CSS); });
  router.get('/assets/app.js', routeName('/assets/app.js'), (_req, res) => { res.type('js').send(APP_JS); });
  router.get('/assets/envelope.js', routeName('/assets/envelope.js'), (_req, res) => { res.type('js').send(ENVELOPE_JS); });

  router.get('/', routeName('/'), (_req, res) => {
    send(res, 200, createPage(deps.formTokens.issue('create')));
  });

  router.post('/', routeName('/'), form, async (req, res) => {
    // A create needs no note's secret, so a page without fetch metadata (plain HTTP on a host that is not
    // localhost sends no Sec-Fetch-Site, and no-referrer makes its Origin `null`) may still create with its
    // single-use token (DECISIONS 13's fallback); reveals keep the strict rule.
    sameOriginOrThrow(req, allowedOrigin, { opaqueOriginAllowed: true });
    const fields = formFields(req.body);
    if (!(await deps.formTokens.redeem(fields.form_token, 'create'))) throw new PageForbidden();
    const values: CreateFormValues = fields;
    const sealedInBrowser = fields.client_encrypted === 'true';
    try {
      const input = validateCreateNote(formToRequest(fields));
      const created = await deps.notes.create(input);
      // A QR code of a link without its key would open nothing; the browser shows that link and key itself.
      const qr = input.keyCheck ? '' : await QRCode.toString(created.url, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
      send(res, 200, createdPage(created, qr, input.keyCheck !== null && input.keyCheck !== undefined));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      // The envelope is never echoed back into the text box (it would be sealed again).
      const shown = sealedInBrowser ? { ...values, content: undefined } : values;
      send(res, 400, createPage(deps.formTokens.issue('create'), shown, { parameter: err.parameter, message: err.message }, sealedInBrowser));
    }
  });

  router.get('/:uuid', routeName('/:uuid'), async (req, res) => {
    const uuid = noteId(req);
    const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
    // The page itself uses no view; the receipt records the fetch (a link preview or a reader).
    await deps.receipts?.notePageFetched(uuid, req.get('user-agent')).catch((err: unknown) => {
      deps.logger.warn('receipt: page fetch not recorded', { requestId: res.locals.requestId, err: describe(err) });
    });
    send(res, 200, notePage(meta, deps.formTokens.issue('reveal', uuid)));
  });

  router.post('/:uuid', routeName('/:uuid'), form, async (req, res) => {
    const uuid = noteId(req);
    sameOriginOrThrow(req, allowedOrigin);
    const fields = formFields(req.body);
    if (!(await deps.formTokens.redeem(fields.form_token, 'reveal', uuid))) throw new PageForbidden();
    const passcode = typeof fields.passcode === 'string' && fields.passcode !== '' ? fields.passcode : null;
    const keyCheck = typeof fields.key_check === 'string' && fields.key_check !== '' ? fields.key_check : null;
    const result = await deps.notes.reveal(uuid, passcode, keyCheck, requestAccess(req));
    switch (result.outcome) {
      case 'revealed':
        send(res, 200, revealedPage(result.content, result.currentViews, result.maxViews, result.destroyed, result.clientEncrypted));
        return;
      case 'key_required': {
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        send(res, 400, notePage(meta, deps.formTokens.issue('reveal', uuid), KEY_MISSING));
        return;
      }
      case 'wrong_passcode': {
        if (result.lockedOut) throw new PageNotFound();
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        const tries = `${result.attemptsLeft} ${result.attemptsLeft === 1 ? 'try' : 'tries'}`;
        send(res, 400, notePage(meta, deps.formTokens.issue('reveal', uuid), `Wrong passcode. Nothing was shown. ${tries} left before the note is destroyed.`));
        return;
      }
      case 'attempts_busy': {
        // Every try left is being checked by other requests right now (DECISIONS 3): this one was
        // neither checked nor counted.
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        res.setHeader('Retry-After', '2');
        send(res, 429, notePage(meta, deps.formTokens.issue('reveal', uuid), 'Other passcode attempts on this note are being checked right now. Nothing was shown and this try was not counted. Try again in a moment.'));
        return;
      }
      default:
        throw new PageNotFound();
    }
  });

  // Whatever else reaches the pages (the API is mounted first and answers all of /api) is no page.
  router.use(() => { throw new PageNotFound(); });

  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) { next(err); return; }
    // A note link whose escapes cannot be decoded (`/%ff%fe`) can name no note. The router's error
    // quotes the raw path, so it is answered here and never logged.
    if (err instanceof PageNotFound || isUndecodablePath(err)) { send(res, 404, notFoundPage()); return; }
    if (err instanceof PageForbidden) { send(res, 403, forbiddenPage()); return; }
    if (err instanceof AppError && err.statusCode < 500) {
      // Body parser errors and the like: the form could not be read.
      send(res, 400, errorPage('The form could not be read.'));
      return;
    }
    const status = err instanceof AppError ? err.statusCode : 500;
    if (err instanceof AppError) for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
    deps.logger.error('page failed', { requestId: res.locals.requestId, route: res.locals.routeName, err: describe(err) });
    send(res, status, errorPage(status === 503 ? 'The service is briefly unavailable.' : 'The service could not complete this request.'));
  });

  return router;
}

function noteId(req: Request): string {
  const uuid = String(req.params.uuid);
  if (!UUID.test(uuid)) throw new PageNotFound();
  return uuid;
}

/**
 * Who asked, for the webhook's access_details (DECISIONS 11): the client address as the gateway
 * determined it (it replaces any X-Forwarded-For a client sent, and notes is reachable only through
 * it), else the peer; the user agent as sent, bounded.
 */
export function requestAccess(req: Request): RequestAccess {
  const forwarded = req.get('x-forwarded-for');
  const last = forwarded?.split(',').map((part) => part.trim()).filter(Boolean).pop();
  return {
    ipAddress: last ?? req.socket.remoteAddress ?? '',
    userAgent: (req.get('user-agent') ?? '').slice(0, USER_AGENT_MAX_LENGTH),
  };
}

function notFoundAsPage(err: unknown): never {
  if (err instanceof AppError && err.statusCode === 404) throw new PageNotFound();
  throw err;
}

/**
 * Browsers say where a form came from. Sec-Fetch-Site cannot be set by a page, so when present it
 * decides; our own pages send `Origin: null` (Referrer-Policy no-referrer makes browsers hide the
 * origin of form posts), so an explicit Origin must be ours and a bare `null` needs Sec-Fetch-Site.
 * Clients that send neither still need the single-use form token.
 */
export function sameOriginOrThrow(req: Request, allowedOrigin: string, options: { opaqueOriginAllowed?: boolean } = {}): void {
  const site = req.get('sec-fetch-site');
  if (site !== undefined) {
    if (site !== 'same-origin') throw new PageForbidden();
    return;
  }
  const origin = req.get('origin');
  if (origin === undefined) return;
  if (origin === 'null' && options.opaqueOriginAllowed) return;
  if (origin !== allowedOrigin && origin !== `${req.protocol}://${req.get('host')}`) throw new PageForbidden();
}

function formFields(body: unknown): Record<string, string | undefined> {
  const source = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const out: Record<string, string | undefined> = {};
  for (const name of [...FORM_FIELDS, 'form_token', 'key_check', 'client_encrypted']) {
    const value = Object.prototype.hasOwnProperty.call(source, name) ? source[name] : undefined;
    out[name] = typeof value === 'string' ? value : undefined;
  }
  return out;
}

/** Form fields are strings; the API validator takes JSON types, so whole numbers become numbers. */
function formToRequest(fields: Record<string, string | undefined>): Record<string, unknown> {
  const request: Record<string, unknown> = { ...fields };
  delete request.form_token;
  // DECISIONS 13: the page's script sends client_encrypted=true with an envelope; any other value is not the flag.
  if (fields.client_encrypted === 'true') request.client_encrypted = true;
  else delete request.client_encrypted;
  for (const name of ['expiry_time', 'max_views']) {
    const value = fields[name];
    if (value === undefined || value.trim() === '') delete request[name];
    else if (/^\s*\d{1,6}\s*$/.test(value)) request[name] = Number(value);
  }
  if (fields.expiry_type === 'view') delete request.expiry_time;
  if (fields.expiry_type === 'time') delete request.max_views;
  return request;
}

function describe(err: unknown): unknown {
  const cause = err instanceof AppError && err.cause ? err.cause : err;
  return cause instanceof Error ? { name: cause.name, message: cause.message } : String(cause);
}
