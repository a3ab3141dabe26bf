import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  httpMetrics,
  inSequence,
  MethodNotAllowedError,
  NotFoundError,
  RateLimitedError,
  requestId,
  ValidationError,
  type Logger,
  type Registry,
} from '@vanish/common';
import { createClientKeyDeriver } from '../domain/client-key';
import { rateLimitHeaders } from '../domain/limit-policy';
import type { RateLimiter } from '../domain/rate-limiter';
import type { GatewayMetrics } from '../gateway-metrics';
import { accessLog } from './access-log';
import { clientAddress } from './client-address';
import { bodyGuard, cutUnfinishedBodies } from './body-guard';
import { cors } from './cors';
import { allowedMethods, matchRoute, type GatewayRoute, type UpstreamName } from './route-table';
import { answerHeaders } from './security-headers';
import { sendError } from './send-error';

export interface GatewayAppOptions {
  trustProxy: boolean | number | string;
  corsOrigins: readonly string[];
  requireHttps: boolean;
  publicBaseUrl: string | undefined;
  limiterKey: Buffer;
  limiter: RateLimiter;
  proxies: Readonly<Record<UpstreamName, RequestHandler>>;
  /**
   * Per upstream, the relay of GETs and HEADs of the routes marked repeatableRead: on connections that carry
   * several at once (UPSTREAM_PIPELINING; the same relays as `proxies` when that is 1).
   */
  reads: Readonly<Record<UpstreamName, RequestHandler>>;
  /** Per upstream, the relay of GETs that share reads (routes marked sharedRead). */
  sharedReads: Readonly<Record<UpstreamName, RequestHandler>>;
  /** The relay of the files routes (files-relay.ts): streamed, limited in bytes, cut when idle. */
  files: RequestHandler;
  logger: Logger;
  registry: Registry;
  metrics: GatewayMetrics;
  isDraining: () => boolean;
}

/**
 * The public door, in the order a request meets it: request id and access log; route lookup
 * (unknown /api paths answer 404 here); DECISIONS 8 headers; HTTPS; CORS; methods (OPTIONS 204,
 * others 405 with Allow); the per-client limit; the body limits; the relay (shared for the GETs of
 * routes whose answer is everyone's). Every refusal is
 * answered by the gateway itself in the SPEC 7 error shape.
 */
export function createGatewayApp(options: GatewayAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', options.trustProxy);

  // One express layer runs the whole door: the router's per-layer work (prefix trimming, parameter
  // processing, a layer match) for twelve layers cost more than the steps themselves (issue 18).
  app.use(inSequence([
    (_req, res, next) => {
      if (options.isDraining()) res.setHeader('Connection', 'close');
      next();
    },
    requestId,
    httpMetrics(options.registry, 'gateway'),
    accessLog(options.logger),
    lookUpRoute,
    cutUnfinishedBodies(undefined, (res) => (res.locals.route as GatewayRoute | undefined)?.files === true),
    answerHeaders,
    requireHttps(options.requireHttps, options.publicBaseUrl),
    cors(options.corsOrigins),
    checkMethod,
    limit(options),
    unlessFiles(bodyGuard()),
    (req, res, next) => {
      const route = res.locals.route as GatewayRoute;
      if (route.files) {
        options.files(req, res, next);
        return;
      }
      // A query string is the client's own: such a GET is relayed alone (shared reads are keyed by path).
      const read = req.method === 'GET' || req.method === 'HEAD';
      const shared = route.sharedRead && req.method === 'GET' && !req.url.includes('?');
      const relay = shared ? options.sharedReads : read && route.repeatableRead ? options.reads : options.proxies;
      relay[route.upstream](req, res, next);
    },
  ]));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(req, res, err);
  });
  return app;
}

const lookUpRoute: RequestHandler = (req, res, next) => {
  const match = matchRoute(req.path);
  res.locals.routeMatch = match;
  if (match.found) {
    res.locals.route = match.route;
    res.locals.routeKind = match.route.kind;
    res.locals.routeName = match.route.template;
    next();
    return;
  }
  res.locals.routeKind = match.kind;
  res.locals.routeName = match.template;
  next(new NotFoundError('NOT_FOUND', match.kind === 'api' ? 'No such API endpoint' : 'Page not found'));
};

function requireHttps(required: boolean, publicBaseUrl: string | undefined): RequestHandler {
  const publicOrigin = publicBaseUrl?.startsWith('https:') ? new URL(publicBaseUrl).origin : undefined;
  return (req, res, next) => {
    if (!required || req.secure) {
      next();
      return;
    }
    if (res.locals.routeKind === 'api') {
      next(new ValidationError('HTTPS_REQUIRED', 'HTTPS is required', { parameter: null }));
      return;
    }
    const origin = publicOrigin ?? httpsOriginOf(req.headers.host);
    if (!origin) {
      next(new ValidationError('HTTPS_REQUIRED', 'HTTPS is required', { parameter: null }));
      return;
    }
    res.redirect(308, `${origin}${req.originalUrl}`);
  };
}

function httpsOriginOf(host: string | undefined): string | undefined {
  if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host)) return undefined;
  try {
    const url = new URL(`https://${host}`);
    // The public port of a plain-HTTP listener is not the HTTPS one: drop it.
    return `https://${url.hostname}`;
  } catch {
    return undefined;
  }
}

/** Files stream their bodies (files-relay.ts): the JSON body guard, which reads bodies whole, is not theirs. */
function unlessFiles(step: RequestHandler): RequestHandler {
  return (req, res, next) => ((res.locals.route as GatewayRoute).files ? next() : step(req, res, next));
}

const checkMethod: RequestHandler = (req, res, next) => {
  const route = res.locals.route as GatewayRoute;
  if (req.method === 'OPTIONS' && !('OPTIONS' in route.methods)) {
    res.setHeader('Allow', route.allow);
    res.status(204).end();
    return;
  }
  if (!(req.method in route.methods)) {
    next(new MethodNotAllowedError(allowedMethods(route)));
    return;
  }
  next();
};

function limit(options: GatewayAppOptions): RequestHandler {
  const clientKey = createClientKeyDeriver(options.limiterKey);
  return async (req, res, next) => {
    const route = res.locals.route as GatewayRoute;
    const action = route.methods[req.method];
    if (action === undefined) {
      next();
      return;
    }
    const address = clientAddress(req) ?? 'unknown';
    let decision;
    try {
      decision = await options.limiter.consume(action, clientKey(address));
    } catch (err) {
      // Cannot happen with the shipped limiters (Redis falls back to memory); if it does, the
      // request goes through rather than the site going down, and the error is loud.
      options.logger.error('rate limiter failed; request let through', { action, err: (err as Error).message });
      next();
      return;
    }
    const headers = rateLimitHeaders(decision);
    res.locals.limitFromFallback = decision.fromFallback;
    if (!decision.allowed) {
      options.metrics.rateLimited.inc({ action });
      next(new RateLimitedError(decision.resetSeconds, headers));
      return;
    }
    for (const name in headers) res.setHeader(name, headers[name]!);
    next();
  };
}
