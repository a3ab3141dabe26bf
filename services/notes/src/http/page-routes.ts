import express, { type NextFunction, type Request, type Response, Router } from 'express';
import {
  AppError, InternalError, LANG_COOKIE, THEME_COOKIE, type Logger, type Outages, ValidationError, bodyRefusalStatus, isTheme, isUndecodablePath,
  logServerError, markPageError, pageHeaders, readerLanguage, readerTheme, routeName,
} from '@vanish/common';
import { validateCreateNote } from '../domain/create-note-validator';
import type { NotesApi } from '../domain/notes';
import type { RequestAccess } from '../domain/note-webhooks';
import { PayloadTooLargeError } from '../files/errors';
import { creatorMark } from '../receipts/creator-mark';
import type { FormTokens } from './form-tokens';
import { PAGE_ASSETS } from './pages/assets';
import type { ExpiryPreset } from './pages/expiry-presets';
import { Translations, isLocale } from './pages/i18n';
import {
  type CreateFormValues, type PageContext, createPage, createdPage, errorPage, forbiddenPage,
  formErrorMessage, notFoundPage, notePage, notYetPage, revealedPage,
} from './pages/templates';

/**
 * qrcode (with pngjs, for a renderer the pages never use) is loaded by the first created page that shows a code,
 * not at start: about 0.9 MB of heap that a service answering only the API never needs (issue 35, memory).
 */
let qrCodeModule: Promise<typeof import('qrcode')> | undefined;
const qrCode = (): Promise<typeof import('qrcode')> => (qrCodeModule ??= import('qrcode'));

export interface PageRoutesDeps {
  notes: NotesApi;
  formTokens: FormTokens;
  publicBaseUrl: string;
  logger: Logger;
  /** The service's dependencies: a 503 for one that is down is logged as part of its outage. */
  outages?: Outages;
  /** Told of every GET/HEAD of a note page, for the note's receipt (DECISIONS 12). */
  receipts?: { notePageFetched(uuid: string, userAgent: string | undefined): Promise<void> };
  /** EXPIRY_PRESETS (issue 20); none: the create page asks for hours only. */
  expiryPresets?: readonly ExpiryPreset[];
  /** NOTE_RETENTION_HOURS, for the create page's hint. */
  retentionHours?: number;
  translations?: Translations;
}

/** The reader's choices: first-party, no identifier, a year long, never sent to another site's requests. */
const COOKIE_MAX_AGE_MS = 365 * 24 * 3_600_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FORM_FIELDS = [
  'content', 'expiry_type', 'expiry_preset', 'expiry_time', 'max_views', 'passcode', 'notification_email', 'send_link_email', 'webhook_url',
  'shrink_after_first_view_minutes', 'available_from', 'release_after_silence_hours',
] as const;
/** A browser's datetime-local value (no zone): the page says it is UTC. */
const LOCAL_DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::(\d{2}))?$/;
const USER_AGENT_MAX_LENGTH = 512;

class PageNotFound extends Error {}
export class PageForbidden extends Error {}

/** Issue 20: the reader's switcher choice (cookie), else Accept-Language, else English; for every page route. */
export function pageContextFor(translations: Translations): (req: Request, switcher: boolean) => PageContext {
  const languages = translations.names();
  return (req, switcher) => ({ t: translations.get(readerLanguage(req)), theme: readerTheme(req), languages, switcher });
}

/**
 * The switcher is a GET form to the page itself: remember the choice, then show the page at its own
 * address again (the browser keeps a link's #key across this redirect). Pages answer per language.
 */
export function pageSettings(publicBaseUrl: string): express.RequestHandler {
  const secure = new URL(publicBaseUrl).protocol === 'https:';
  return (req, res, next) => {
    res.vary('Cookie');
    res.vary('Accept-Language');
    if (req.method !== 'GET' || (req.query.lang === undefined && req.query.theme === undefined)) { next(); return; }
    const options = { path: '/', maxAge: COOKIE_MAX_AGE_MS, sameSite: 'lax' as const, httpOnly: true, secure };
    if (isLocale(req.query.lang)) res.cookie(LANG_COOKIE, req.query.lang, options);
    if (isTheme(req.query.theme)) res.cookie(THEME_COOKIE, req.query.theme, options);
    const path = req.baseUrl + req.path;
    // The page's own other parameters stay (a receipt's ?as=creator); only the settings leave the address.
    const query = new URL(req.originalUrl, 'http://page.invalid').searchParams;
    query.delete('lang');
    query.delete('theme');
    const rest = query.size > 0 ? `?${query.toString()}` : '';
    res.redirect(303, path.startsWith('/') && !path.startsWith('//') ? `${path}${rest}` : '/');
  };
}

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
  const translations = deps.translations ?? new Translations();
  const presets = deps.expiryPresets ?? [];
  const retentionDays = Math.max(1, Math.round((deps.retentionHours ?? 720) / 24));
  const context = pageContextFor(translations);

  router.use(pageHeaders);
  router.use(pageSettings(deps.publicBaseUrl));

  for (const asset of PAGE_ASSETS) {
    router.get(asset.path, routeName(asset.path), (_req, res) => {
      if (asset.cacheControl) res.setHeader('Cache-Control', asset.cacheControl);
      res.type(asset.type).send(asset.body);
    });
  }

  router.get('/', routeName('/'), (req, res) => {
    send(res, 200, createPage(context(req, true), deps.formTokens.issue('create'), presets, {}, undefined, false, retentionDays));
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
    const ctx = context(req, false);
    try {
      const request = formToRequest(fields);
      const preset = chosenPreset(fields, presets);
      // The API's hours are whole; a preset may be shorter than an hour, so the page sets the lifetime itself.
      if (preset) request.expiry_time = Math.max(1, Math.ceil(preset.minutes / 60));
      const validated = validateCreateNote(request);
      const input = { ...validated, ...(preset ? { expiryHours: preset.minutes / 60 } : {}), lang: ctx.t.locale };
      const created = await deps.notes.create(input);
      // A QR code of a link without its key would open nothing; the browser shows that link and key itself.
      const qr = input.keyCheck ? '' : await (await qrCode()).toString(created.url, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
      // DECISIONS 16: this browser created the note; its receipt page shows the receipt, not the guard.
      if (created.receiptUrl) {
        const mark = creatorMark(created.receiptUrl, created.expiresAt, deps.retentionHours ?? 720, new Date());
        res.cookie(mark.name, mark.value, mark.options);
      }
      send(res, 200, createdPage(ctx, created, qr, input.keyCheck !== null && input.keyCheck !== undefined));
    } catch (err) {
      // DECISIONS 14: files over FILE_MAX_BYTES are refused as the API refuses them (413), on the form.
      if (!(err instanceof ValidationError) && !(err instanceof PayloadTooLargeError)) throw err;
      // The envelope is never echoed back into the text box (it would be sealed again).
      const shown = sealedInBrowser ? { ...values, content: undefined } : values;
      const parameter = err.parameter ?? null;
      send(res, err instanceof PayloadTooLargeError ? 413 : 400, createPage({ ...ctx, switcher: true }, deps.formTokens.issue('create'), presets, shown, { parameter, message: formErrorMessage(ctx.t, parameter) }, sealedInBrowser, retentionDays));
    }
  });

  router.get('/:uuid', routeName('/:uuid'), async (req, res) => {
    const uuid = noteId(req);
    const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
    // The page itself uses no view; the receipt records the fetch (a link preview or a reader).
    await deps.receipts?.notePageFetched(uuid, req.get('user-agent')).catch((err: unknown) => {
      const outage = deps.outages?.forError(err);
      if (outage) outage.failed({ requestId: res.locals.requestId, task: 'receipt of a page fetch', err });
      else deps.logger.warn('receipt: page fetch not recorded', { requestId: res.locals.requestId, err: describe(err) });
    });
    // DECISIONS 16: not open yet: the page says when (or that it is held) and offers nothing to post.
    const release = meta.controls?.releaseState;
    if (release === 'scheduled' || release === 'held') {
      send(res, 200, notYetPage(context(req, true), release === 'scheduled' ? meta.controls!.availableFrom ?? null : null));
      return;
    }
    send(res, 200, notePage(context(req, true), meta, deps.formTokens.issue('reveal', uuid)));
  });

  router.post('/:uuid', routeName('/:uuid'), form, async (req, res) => {
    const uuid = noteId(req);
    sameOriginOrThrow(req, allowedOrigin);
    const fields = formFields(req.body);
    if (!(await deps.formTokens.redeem(fields.form_token, 'reveal', uuid))) throw new PageForbidden();
    const passcode = typeof fields.passcode === 'string' && fields.passcode !== '' ? fields.passcode : null;
    const keyCheck = typeof fields.key_check === 'string' && fields.key_check !== '' ? fields.key_check : null;
    const result = await deps.notes.reveal(uuid, passcode, keyCheck, requestAccess(req));
    const ctx = context(req, false);
    switch (result.outcome) {
      case 'revealed':
        send(res, 200, revealedPage(ctx, result.content, result.currentViews, result.maxViews, result.destroyed, result.clientEncrypted, result.files));
        return;
      case 'upload_incomplete': {
        // DECISIONS 14: nothing was claimed; the page says the files are still being uploaded.
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        send(res, 409, notePage({ ...ctx, switcher: true }, meta, deps.formTokens.issue('reveal', uuid)));
        return;
      }
      case 'key_required': {
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        send(res, 400, notePage({ ...ctx, switcher: true }, meta, deps.formTokens.issue('reveal', uuid), ctx.t.t('note.keyRefused'), true));
        return;
      }
      case 'wrong_passcode': {
        if (result.lockedOut) throw new PageNotFound();
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        send(res, 400, notePage({ ...ctx, switcher: true }, meta, deps.formTokens.issue('reveal', uuid), ctx.t.t('note.wrongPasscode', { tries: result.attemptsLeft })));
        return;
      }
      case 'not_yet':
        // DECISIONS 16: nothing was checked, consumed or counted.
        send(res, 409, notYetPage({ ...ctx, switcher: true }, result.opensAt));
        return;
      case 'attempts_busy': {
        // Every try left is being checked by other requests right now (DECISIONS 3): this one was
        // neither checked nor counted.
        const meta = await deps.notes.metadata(uuid).catch(notFoundAsPage);
        res.setHeader('Retry-After', '2');
        send(res, 429, notePage({ ...ctx, switcher: true }, meta, deps.formTokens.issue('reveal', uuid), ctx.t.t('reveal.attemptsBusy')));
        return;
      }
      default:
        throw new PageNotFound();
    }
  });

  // Whatever else reaches the pages (the API is mounted first and answers all of /api) is no page.
  router.use(() => { throw new PageNotFound(); });

  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) { next(err); return; }
    const ctx = context(req, req.method === 'GET');
    // A note link whose escapes cannot be decoded (`/%ff%fe`) can name no note. The router's error
    // quotes the raw path, so it is answered here and never logged.
    if (err instanceof PageNotFound || isUndecodablePath(err)) { send(res, 404, notFoundPage(ctx)); return; }
    answerPageError(err, req, res, ctx, deps);
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
 * The end of every page router's error handler (notes, receipts, requests), after each has answered its own
 * "not found" pages: a refused form is the client's mistake (the form error page, logged only by the access
 * log); anything else is ours (logged, counted in an outage, and marked so the gateway passes the page on).
 */
export function answerPageError(
  err: unknown, req: Request, res: Response, ctx: PageContext, deps: { logger: Logger; outages?: Outages },
): void {
  const send = (status: number, page: string) => { res.status(status).type('html').send(page); };
  if (err instanceof PageForbidden) { send(403, forbiddenPage(ctx)); return; }
  // The body parser refused the form (too many fields, too large, a charset or encoding it does not read).
  const refused = bodyRefusalStatus(err);
  if (refused !== undefined) {
    if (!req.complete) res.setHeader('Connection', 'close');
    send(refused, errorPage(ctx, ctx.t.t('error.formUnreadable')));
    return;
  }
  if (err instanceof AppError && err.statusCode < 500) { send(400, errorPage(ctx, ctx.t.t('error.formUnreadable'))); return; }
  const appError = err instanceof AppError ? err : new InternalError(err);
  for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
  logServerError(deps.logger, deps.outages, appError, err, req, res);
  // The page is this service's own answer: the gateway passes it on unchanged (PAGE_ERROR_HEADER).
  markPageError(res, appError);
  send(appError.statusCode, errorPage(ctx, ctx.t.t(appError.statusCode === 503 ? 'error.unavailable' : 'error.failed')));
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
  for (const name of [...FORM_FIELDS, 'form_token', 'key_check', 'client_encrypted', 'files']) {
    const value = Object.prototype.hasOwnProperty.call(source, name) ? source[name] : undefined;
    out[name] = typeof value === 'string' ? value : undefined;
  }
  return out;
}

/** Form fields are strings; the API validator takes JSON types, so whole numbers become numbers. */
function formToRequest(fields: Record<string, string | undefined>): Record<string, unknown> {
  const request: Record<string, unknown> = { ...fields };
  delete request.form_token;
  delete request.expiry_preset;
  // DECISIONS 13: the page's script sends client_encrypted=true with an envelope; any other value is not the flag.
  if (fields.client_encrypted === 'true') request.client_encrypted = true;
  else delete request.client_encrypted;
  // DECISIONS 14: the page's script sends the files' sealed sizes as JSON text; the validator checks the shape.
  if (fields.files === undefined || fields.files === '') delete request.files;
  else {
    try {
      request.files = JSON.parse(fields.files) as unknown;
    } catch {
      request.files = fields.files;
    }
  }
  for (const name of ['expiry_time', 'max_views', 'shrink_after_first_view_minutes', 'release_after_silence_hours']) {
    const value = fields[name];
    if (value === undefined || value.trim() === '') delete request[name];
    else if (/^\s*\d{1,6}\s*$/.test(value)) request[name] = Number(value);
  }
  // DECISIONS 16: the page's release time is UTC, as its label says.
  const from = LOCAL_DATE_TIME.exec(fields.available_from?.trim() ?? '');
  if (from) request.available_from = `${from[1]} ${from[2]}:${from[3] ?? '00'}`;
  if (fields.expiry_type === 'view') delete request.expiry_time;
  if (fields.expiry_type === 'time') delete request.max_views;
  return request;
}

function chosenPreset(fields: Record<string, string | undefined>, presets: readonly ExpiryPreset[]): ExpiryPreset | undefined {
  const value = fields.expiry_preset;
  if (fields.expiry_type === 'view' || value === undefined || value === 'custom') return undefined;
  const preset = presets.find((candidate) => candidate.value === value);
  if (!preset) throw new ValidationError('INVALID_EXPIRY_TIME', 'expiry_preset is not one of the offered presets', { parameter: 'expiry_preset' });
  return preset;
}

function describe(err: unknown): unknown {
  const cause = err instanceof AppError && err.cause ? err.cause : err;
  return cause instanceof Error ? { name: cause.name, message: cause.message } : String(cause);
}
