import { createServer, IncomingMessage, ServerResponse, type Server, type ServerOptions } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TlsOptions } from 'node:tls';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Registry } from 'prom-client';
import { AppError, MethodNotAllowedError, NotFoundError, ValidationError, toAppError } from './errors';
import { ListenError, type ListenSettingNames } from './listen-error';
import { RandomPool } from './random-pool';
import type { Outages } from './dependency-state';
import type { Logger } from './logger';

export const API_VERSION = '1.2.0';

/**
 * Browser features no vanish page uses, switched off for the page and anything it might embed
 * (clipboard writing, used by the copy button, is left alone).
 */
export const PERMISSIONS_POLICY = [
  'accelerometer', 'autoplay', 'camera', 'display-capture', 'encrypted-media', 'fullscreen', 'geolocation',
  'gyroscope', 'magnetometer', 'microphone', 'midi', 'payment', 'picture-in-picture', 'publickey-credentials-get',
  'screen-wake-lock', 'sync-xhr', 'usb', 'xr-spatial-tracking',
].map((feature) => `${feature}=()`).join(', ');

/**
 * DECISIONS 8: on every answer. COOP and CORP keep other origins' windows and no-cors requests
 * away from our pages and answers (CORS requests, which CORS_ORIGINS governs, are not affected).
 * `X-XSS-Protection: 0` switches off the XSS auditor of old browsers, whose blocking could itself be
 * used to leak what a page holds (OWASP secure headers guidance); the pages' CSP is the protection.
 */
export function baseSecurityHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('X-XSS-Protection', '0');
  res.setHeader('Permissions-Policy', PERMISSIONS_POLICY);
}

export const apiHeaders: RequestHandler = (_req, res, next) => {
  baseSecurityHeaders(res);
  res.setHeader('API-Version', API_VERSION);
  next();
};

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const pageHeaders: RequestHandler = (_req, res, next) => {
  baseSecurityHeaders(res);
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  next();
};

/**
 * A request id travels from the gateway to the service behind it and into every log line of the
 * request, and the logs redact note ids only where they sit in known fields: a client's id is kept
 * only in a strict shape that cannot carry a note id (no 8-4-4-4-12 hex group and no 32 hex digits
 * in a row, in any case, with or without separators). Anything else is replaced by a fresh id.
 */
export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_SHAPE = /^[A-Za-z0-9._-]{1,64}$/;
const NOTE_ID_SHAPE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const HEX_RUN_OF_A_NOTE_ID = /[0-9a-f]{32}/i;

export function isAcceptableRequestId(candidate: string | undefined): candidate is string {
  if (candidate === undefined || !REQUEST_ID_SHAPE.test(candidate)) return false;
  return !NOTE_ID_SHAPE.test(candidate) && !HEX_RUN_OF_A_NOTE_ID.test(candidate.replace(/[._-]/g, ''));
}

const REQUEST_ID_BYTES = 12;
/** Random bytes for 256 ids per CSPRNG call: one call per request was 3 % of the gateway's CPU. */
const requestIdRandom = new RandomPool(REQUEST_ID_BYTES * 256);

/** 16 characters of [A-Za-z0-9_-]: never the shape of a note id, so it passes the next hop's check. */
export function newRequestId(): string {
  return requestIdRandom.take(REQUEST_ID_BYTES).toString('base64url');
}

export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.header(REQUEST_ID_HEADER);
  const id = isAcceptableRequestId(incoming) ? incoming : newRequestId();
  res.locals.requestId = id;
  req.headers[REQUEST_ID_HEADER] = id;
  res.setHeader('X-Request-Id', id);
  next();
};

export const MAX_JSON_BYTES = 128 * 1024;

/**
 * JSON bodies for POST routes: the content type is checked before reading, the size is bounded
 * (including chunked and compressed bodies, which express decodes within the same limit), and
 * parse errors become DECISIONS 4 codes.
 */
export function jsonBody(limitBytes = MAX_JSON_BYTES): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!req.is('application/json')) {
      next(new ValidationError('INVALID_CONTENT_TYPE', 'Content-Type must be application/json', { parameter: null }));
      return;
    }
    next();
  };
  const parse = express.json({ limit: limitBytes, strict: false, inflate: false });
  return [requireJson, parse];
}

/** Translates body-parser's errors (which carry `type`) into our codes. */
export function bodyErrorToAppError(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  switch ((err as { type: string }).type) {
    case 'entity.parse.failed':
      return new ValidationError('INVALID_JSON', 'Request body is not valid JSON');
    case 'entity.too.large':
      return new ValidationError('PAYLOAD_TOO_LARGE', `Request body exceeds ${MAX_JSON_BYTES / 1024} KiB`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ValidationError('INVALID_CONTENT_TYPE', 'Unsupported body encoding or charset');
    case 'parameters.too.many':
      return new ValidationError('PAYLOAD_TOO_LARGE', 'Request body has too many fields');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'querystring.parse.rangeError':
      return new ValidationError('INVALID_JSON', 'Request body could not be read');
    default:
      return undefined;
  }
}

/**
 * The status a page answers when a body parser (express.urlencoded, express.json) refused what the
 * client sent: 413 when the body is over a size or field-count limit, 400 when it cannot be read (an
 * unsupported charset or content encoding, a broken or aborted body). Undefined for anything else, so a
 * server fault stays one. body-parser marks its errors with `type` and a 4xx `status`; both are checked,
 * so an error of our own that merely has a `type` is not mistaken for a client's.
 */
export function bodyRefusalStatus(err: unknown): 400 | 413 | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  const status = (err as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  switch ((err as { type: unknown }).type) {
    case 'entity.too.large':
    case 'parameters.too.many':
      return 413;
    case 'entity.parse.failed':
    case 'entity.verify.failed':
    case 'encoding.unsupported':
    case 'charset.unsupported':
    case 'querystring.parse.rangeError':
    case 'request.aborted':
    case 'request.size.invalid':
      return 400;
    default:
      return undefined;
  }
}

/**
 * True for the error express's router raises when a path parameter is not valid percent-encoding
 * (`/%ff%fe`, `/<uuid>%E0`): a URIError it marks with status 400. Its message quotes the raw path,
 * so it must never reach a log; a path that cannot be decoded names nothing that exists. (A URIError
 * of our own making has no status: it stays a 500, a bug.)
 */
export function isUndecodablePath(err: unknown): boolean {
  return err instanceof URIError && (err as URIError & { status?: unknown }).status === 400;
}

/** A path that cannot be decoded answers 404 NOT_FOUND (never 500, never a log line with the path). */
export function undecodablePathToAppError(err: unknown): AppError | undefined {
  return isUndecodablePath(err) ? new NotFoundError('NOT_FOUND', 'Not found') : undefined;
}

/**
 * The one place errors become answers: SPEC 7 body, the error's own status and headers, and
 * only server errors are logged as errors (client mistakes are not incidents). A 503 for a
 * dependency that cannot be reached (DependencyUnavailableError) is reported to that dependency's
 * state in `outages` instead: one line when it goes, summaries, one when it is back; this request
 * at debug with its id.
 */
export function errorHandler(logger: Logger, outages?: Outages): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appError = bodyErrorToAppError(err) ?? undecodablePathToAppError(err) ?? toAppError(err);
    if (appError.statusCode >= 500) logServerError(logger, outages, appError, err, req, res);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Bodies that were not read are drained by closing, so a 1 MB upload cannot linger.
    if (!req.complete) res.setHeader('Connection', 'close');
    baseSecurityHeaders(res);
    for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
    res.status(appError.statusCode).json(appError.toBody());
  };
}

/**
 * How a 5xx is logged, by the error handler and by a service's own page handlers: as part of its
 * dependency's outage when it is one (see errorHandler), else one error line with the cause.
 */
export function logServerError(logger: Logger, outages: Outages | undefined, appError: AppError, err: unknown, req: Request, res: Response): void {
  const fields = { requestId: res.locals.requestId as string | undefined, method: req.method, route: res.locals.routeName as string | undefined, code: appError.code };
  const outage = outages?.forError(appError) ?? outages?.forError(err);
  if (outage) {
    outage.failed({ ...fields, err: appError.cause ?? appError });
    return;
  }
  const cause = appError.cause ?? err;
  logger.error('request failed', {
    ...fields,
    err: cause instanceof Error ? { name: cause.name, message: cause.message, stack: cause.stack } : String(cause),
  });
}

/**
 * A service's HTML page for a 5xx (the note page's 503 while the database is down) carries the
 * error shape in this header: the page is the service's own deliberate answer, not a crash page, so
 * the gateway passes it to a browser unchanged and answers other clients the shape itself
 * (services/gateway/src/http/upstream-proxy.ts). A 5xx page without it is replaced, with a warning.
 */
export const PAGE_ERROR_HEADER = 'Vanish-Error';

/** Marks a 5xx page as the service's own answer (see PAGE_ERROR_HEADER); the body is the shape, ASCII-escaped. */
export function markPageError(res: Response, appError: AppError): void {
  res.setHeader(PAGE_ERROR_HEADER, JSON.stringify(appError.toBody()).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** OPTIONS answers 204 with Allow; any other unlisted method answers 405 with Allow. */
export function methodsOnly(allowed: readonly string[]): RequestHandler {
  const withHead = allowed.includes('GET') && !allowed.includes('HEAD') ? [...allowed, 'HEAD'] : [...allowed];
  const allowList = [...withHead, 'OPTIONS'];
  return (req, res, next) => {
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allowList.join(', '));
      res.status(204).end();
      return;
    }
    if (!withHead.includes(req.method)) {
      next(new MethodNotAllowedError(allowList));
      return;
    }
    next();
  };
}

export const apiNotFound: RequestHandler = (_req, _res, next) => {
  next(new NotFoundError('NOT_FOUND', 'No such API endpoint'));
};

/** Names the route for metrics and logs before any handler runs, so no raw path is ever a label. */
export function routeName(name: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.routeName = name;
    next();
  };
}

export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

export interface AdminServerOptions {
  registry: Registry;
  checks: readonly ReadinessCheck[];
  isDraining: () => boolean;
  logger: Logger;
}

/**
 * The admin port: /healthz is liveness (the process answers; no dependency is checked, so a
 * database blip never restarts pods), /readyz checks dependencies and goes red while draining,
 * /metrics is Prometheus. Never routed through the gateway.
 */
export function createAdminApp(options: AdminServerOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => { baseSecurityHeaders(res); next(); });
  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const results: Record<string, string> = {};
    let ready = !options.isDraining();
    for (const check of options.checks) {
      const ok = await check.check().catch(() => false);
      results[check.name] = ok ? 'ok' : 'failing';
      ready &&= ok;
    }
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : options.isDraining() ? 'draining' : 'not_ready', checks: results });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', options.registry.contentType);
    res.send(await options.registry.metrics());
  });
  app.use((_req, _res, next) => { next(new NotFoundError('NOT_FOUND', 'Not found')); });
  app.use(errorHandler(options.logger));
  return app;
}

export interface Listening {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** A certificate pair, and the protocol options a TLS listener may narrow (the gateway's TLS_PROFILE). */
export interface TlsFiles extends Pick<TlsOptions, 'minVersion' | 'maxVersion' | 'ciphers' | 'honorCipherOrder' | 'ecdhCurve'> {
  cert: Buffer | string;
  key: Buffer | string;
}

type Handler = express.Express | ((req: never, res: never) => void);

/** Where tests listen on port 0 and name no setting, a refusal names the port itself. */
const UNNAMED: ListenSettingNames = { port: 'the port' };

/**
 * Listens and resolves with the real port (port 0 in tests). Slow clients cannot hold a socket:
 * headers and whole requests have deadlines. close() stops accepting and waits for in-flight
 * requests, closing idle keep-alive sockets at once. With `tls`, the server speaks HTTPS.
 * `names`: the variables that chose the port and address. A port in use, one the user may not bind or an
 * address not on this machine rejects with a ListenError whose message names them (a service's start-up
 * then ends on that one line; see exitFatally).
 */
export function listen(handler: Handler, port: number, host = '0.0.0.0', tls?: TlsFiles, names: ListenSettingNames = UNNAMED): Promise<Listening> {
  const options = serverOptionsFor(handler);
  const listener = handler as Parameters<typeof createServer>[1];
  const srv: Server = tls ? createTlsServer({ ...options, ...tls }, listener) : createServer(options, listener);
  srv.headersTimeout = 10_000;
  srv.requestTimeout = 30_000;
  srv.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    const refused = (err: unknown) => reject(ListenError.from(err, host, port, names));
    srv.once('error', refused);
    srv.listen(port, host, () => {
      srv.off('error', refused);
      const actual = (srv.address() as AddressInfo).port;
      const origin = !tls && isExpressApp(handler) && LOOPBACK_REACHABLE.has(host) ? `http://127.0.0.1:${actual}` : undefined;
      if (origin) SERVED_HERE.set(origin, handler as express.Express);
      resolve({
        server: srv,
        port: actual,
        close: () => new Promise<void>((done) => {
          if (origin && SERVED_HERE.get(origin) === handler) SERVED_HERE.delete(origin);
          srv.close(() => done());
          srv.closeIdleConnections();
        }),
      });
    });
  });
}

/** The express apps this process serves over plain HTTP on a loopback-reachable address, by origin. */
const SERVED_HERE = new Map<string, express.Express>();
const LOOPBACK_REACHABLE = new Set(['127.0.0.1', '0.0.0.0', '::', 'localhost']);

/**
 * The express app that this process serves at `origin` (`http://127.0.0.1:<port>`, as listen() was
 * given it), if any: the all-in-one's gateway hands requests for its upstreams to their apps in
 * process instead of over a socket (services/gateway/src/http/in-process-dispatcher.ts).
 */
export function appServedHere(origin: string): express.Express | undefined {
  return SERVED_HERE.get(origin);
}

/**
 * Express gives every request and response its own prototypes (app.handle calls
 * Object.setPrototypeOf on both), and objects whose prototype changes after birth push V8 off
 * the fast paths of Node's own http code: a hello-world costs about 136 µs of CPU per request
 * instead of 34 (docs/performance.md, "Why express was slow"). A server whose request and
 * response objects are born with the app's prototypes (Node's IncomingMessage/ServerResponse
 * server options) makes express's swap a no-op; express itself is untouched.
 */
export function serverOptionsFor(handler: Handler): ServerOptions {
  // Node's classes are still plain constructor functions; should they become ES classes (which
  // cannot be called), the server keeps Node's own objects and express swaps prototypes as ever.
  if (!isExpressApp(handler) || !isPlainConstructor(IncomingMessage) || !isPlainConstructor(ServerResponse)) return {};
  const initRequest = IncomingMessage as unknown as (this: IncomingMessage, socket: Socket) => void;
  const initResponse = ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: object) => void;
  // Called with `new` by Node. Plain functions that call Node's constructors on `this`: an object
  // made by Reflect.construct(IncomingMessage, [socket], AppRequest) measured as slow as the swap.
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    initRequest.call(this, socket);
  }
  AppRequest.prototype = handler.request as object;
  function AppResponse(this: ServerResponse, req: IncomingMessage, options?: object): void {
    initResponse.call(this, req, options);
  }
  AppResponse.prototype = handler.response as object;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  };
}

function isPlainConstructor(fn: unknown): boolean {
  return typeof fn === 'function' && !Function.prototype.toString.call(fn).startsWith('class');
}

function isExpressApp(handler: Handler): handler is express.Express {
  const candidate = handler as Partial<express.Express>;
  return typeof candidate.request === 'object' && typeof candidate.response === 'object' && typeof candidate.use === 'function';
}
