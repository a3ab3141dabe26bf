import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Registry } from 'prom-client';
import { AppError, MethodNotAllowedError, NotFoundError, ValidationError, toAppError } from './errors';
import type { Logger } from './logger';

export const API_VERSION = '1.2.0';

/** DECISIONS 8: on every answer. */
export function baseSecurityHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
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

/** Accept a sane incoming id (a proxy's or the gateway's), else make one. */
export const REQUEST_ID_HEADER = 'x-request-id';
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.header(REQUEST_ID_HEADER);
  const id = incoming && /^[A-Za-z0-9._:-]{8,128}$/.test(incoming) ? incoming : randomUUID();
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
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ValidationError('INVALID_JSON', 'Request body could not be read');
    default:
      return undefined;
  }
}

/**
 * The one place errors become answers: SPEC 7 body, the error's own status and headers, and
 * only server errors are logged as errors (client mistakes are not incidents).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appError = bodyErrorToAppError(err) ?? toAppError(err);
    if (appError.statusCode >= 500) {
      const cause = appError.cause ?? err;
      logger.error('request failed', {
        requestId: res.locals.requestId,
        method: req.method,
        route: res.locals.routeName,
        code: appError.code,
        err: cause instanceof Error ? { name: cause.name, message: cause.message, stack: cause.stack } : String(cause),
      });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Bodies that were not read are drained by closing, so a 1 MB upload cannot linger.
    if (!req.complete) res.setHeader('Connection', 'close');
    for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
    res.status(appError.statusCode).json(appError.toBody());
  };
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
  return app;
}

export interface Listening {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/**
 * Listens and resolves with the real port (port 0 in tests). Slow clients cannot hold a socket:
 * headers and whole requests have deadlines. close() stops accepting and waits for in-flight
 * requests, closing idle keep-alive sockets at once.
 */
export function listen(handler: express.Express | ((req: never, res: never) => void), port: number, host = '0.0.0.0', server?: Server): Promise<Listening> {
  const srv = server ?? createServer(handler as Parameters<typeof createServer>[0]);
  srv.headersTimeout = 10_000;
  srv.requestTimeout = 30_000;
  srv.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => {
      srv.off('error', reject);
      const actual = (srv.address() as AddressInfo).port;
      resolve({
        server: srv,
        port: actual,
        close: () => new Promise<void>((done) => {
          srv.close(() => done());
          srv.closeIdleConnections();
        }),
      });
    });
  });
}
